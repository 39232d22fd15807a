/*
Copyright 2026 The s3gw-remediation Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Command prepull is the program of the pre-pull pods
// (docs/warm-replacement.md), at /prepull in the operator's image. It is a
// small static program that runs in any image and as any user:
//
//	prepull install DEST   copy this program to DEST (in an emptyDir), executable by all
//	prepull pulled         exit 0 at once: the command of an init container of a
//	                       gateway's image, in place of its entrypoint
//	prepull idle           wait for SIGTERM or SIGINT: the pod's one container
//
// It imports no more than it needs: every node keeps one per pre-pull pod.
package main

import (
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if err := run(os.Args[1:], wait); err != nil {
		_, _ = os.Stderr.WriteString("prepull: " + err.Error() + "\n")
		os.Exit(1)
	}
}

type usageError string

func (e usageError) Error() string { return string(e) }

const usage = usageError("usage: prepull install DEST | prepull pulled | prepull idle")

// run runs one command; idle is how it waits.
func run(args []string, idle func()) error {
	if len(args) == 0 {
		return usage
	}
	switch args[0] {
	case "install":
		if len(args) != 2 {
			return usage
		}
		self, err := os.Executable()
		if err != nil {
			return err
		}
		return install(self, args[1])
	case "pulled":
		return nil
	case "idle":
		idle()
		return nil
	default:
		return usage
	}
}

// install copies src to dst, readable and executable by every user: the
// init containers of the gateway's images run as a user of their own.
func install(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o555)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chmod(dst, 0o555)
}

// wait blocks until the kubelet stops the container.
func wait() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
}
