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

package main

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
)

// TestUncompressed checks what the API server is asked for, through the
// transport client-go builds from the config.
func TestUncompressed(t *testing.T) {
	tests := []struct {
		name      string
		configure func(*rest.Config) *rest.Config
		want      string
	}{
		{name: "client-go's default asks for gzip", configure: func(c *rest.Config) *rest.Config { return c }, want: "gzip"},
		{name: "the manager's asks for none", configure: uncompressed, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			asked := make(chan string, 1)
			// TLS, as to an API server: client-go builds its own transport
			// then, not Go's default one.
			server := httptest.NewTLSServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
				asked <- r.Header.Get("Accept-Encoding")
			}))
			defer server.Close()
			ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: server.Certificate().Raw})
			client, err := rest.HTTPClientFor(tt.configure(&rest.Config{Host: server.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}))
			g.Expect(err).NotTo(HaveOccurred())
			resp, err := client.Get(server.URL + "/api")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(resp.Body.Close()).To(Succeed())
			g.Expect(<-asked).To(Equal(tt.want))
		})
	}
}
