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

package cluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// probe is one readiness check of a component.
type probe func(ctx context.Context) error

// waitReady polls probe until it passes, the component exits, or timeout
// elapses. Failures carry the component's log tail.
func waitReady(ctx context.Context, c *Process, timeout time.Duration, check probe) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ticker := time.NewTicker(200 * time.Millisecond)
	defer ticker.Stop()
	var lastErr error
	for {
		if exited, err := c.Exited(); exited {
			return c.Failure(fmt.Errorf("exited before becoming ready: %w", err))
		}
		if lastErr = check(ctx); lastErr == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return c.Failure(fmt.Errorf("not ready after %s: %w", timeout, errors.Join(ctx.Err(), lastErr)))
		case <-ticker.C:
		}
	}
}

// httpProbe expects 200 and a body containing want from url.
func httpProbe(client *http.Client, url, bearer, want string) probe {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer func() { _ = resp.Body.Close() }()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			return fmt.Errorf("GET %s: %d %s", url, resp.StatusCode, strings.TrimSpace(string(body)))
		}
		return nil
	}
}

// plainHTTPClient talks to etcd and kwok, which serve plain HTTP here.
func plainHTTPClient() *http.Client {
	return &http.Client{Timeout: 2 * time.Second}
}

// verifyingHTTPClient talks to kube-apiserver, verifying its certificate
// against the cluster CA.
func verifyingHTTPClient(caPEM []byte) (*http.Client, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("no certificate in the cluster CA bundle")
	}
	return &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}},
	}, nil
}

// selfSignedHTTPClient talks to the health endpoints of kube-controller-manager
// and kube-scheduler, which serve a certificate they generate themselves at
// start. Only /healthz is read through it.
func selfSignedHTTPClient() *http.Client {
	return &http.Client{
		Timeout: 2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{
			InsecureSkipVerify: true, //nolint:gosec // loopback health probe of a self-signed component
			MinVersion:         tls.VersionTLS12,
		}},
	}
}
