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
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// adminUser is the static-token user the cluster's clients act as; kwok
// acts as kwokUser, so that an admission policy can tell its writes apart
// (kwok_fence.go).
const (
	adminUser = "local-cluster-admin"
	kwokUser  = "kwok"
)

// credentials are the files the control plane needs, all inside the
// cluster's directory: a CA and serving certificate for kube-apiserver, the
// service-account signing key pair, and the admin token.
type credentials struct {
	caCertPEM    []byte
	caCertFile   string
	servingCert  string
	servingKey   string
	saPublicKey  string
	saPrivateKey string
	tokenFile    string
	adminToken   string
	// userTokens are the tokens of Options.Users and kwok's.
	userTokens     map[string]string
	kubeconfig     string
	kwokKubeconfig string
	apiserverHost  string
}

// writeCredentials generates fresh keys for one cluster. Nothing is reused
// between clusters, so a leaked file from a previous run is harmless.
func writeCredentials(dir string, apiserverPort int, users []string) (*credentials, error) {
	c := &credentials{
		caCertFile:     filepath.Join(dir, "ca.crt"),
		servingCert:    filepath.Join(dir, "apiserver.crt"),
		servingKey:     filepath.Join(dir, "apiserver.key"),
		saPublicKey:    filepath.Join(dir, "sa.pub"),
		saPrivateKey:   filepath.Join(dir, "sa.key"),
		tokenFile:      filepath.Join(dir, "tokens.csv"),
		kubeconfig:     filepath.Join(dir, "admin.kubeconfig"),
		kwokKubeconfig: filepath.Join(dir, "kwok.kubeconfig"),
		apiserverHost:  fmt.Sprintf("https://127.0.0.1:%d", apiserverPort),
	}
	if err := c.writeServingPKI(); err != nil {
		return nil, err
	}
	if err := c.writeServiceAccountKeys(); err != nil {
		return nil, err
	}
	if err := c.writeTokens(append(slices.Clone(users), kwokUser)); err != nil {
		return nil, err
	}
	if err := c.writeKubeconfig(); err != nil {
		return nil, err
	}
	if err := c.writeKubeconfigFor(c.kwokKubeconfig, kwokUser, c.userTokens[kwokUser]); err != nil {
		return nil, err
	}
	return c, nil
}

// writeServingPKI creates a CA and a kube-apiserver serving certificate for
// 127.0.0.1, so clients verify TLS instead of skipping verification.
func (c *credentials) writeServingPKI() error {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generating CA key: %w", err)
	}
	now := time.Now()
	caTemplate := &x509.Certificate{
		SerialNumber:          randomSerial(),
		Subject:               pkix.Name{CommonName: "s3gw-remediation local cluster CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(7 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("signing CA certificate: %w", err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return fmt.Errorf("parsing CA certificate: %w", err)
	}

	servingKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generating serving key: %w", err)
	}
	servingTemplate := &x509.Certificate{
		SerialNumber: randomSerial(),
		Subject:      pkix.Name{CommonName: apiserverName},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(7 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	servingDER, err := x509.CreateCertificate(rand.Reader, servingTemplate, caCert, &servingKey.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("signing serving certificate: %w", err)
	}
	servingKeyDER, err := x509.MarshalECPrivateKey(servingKey)
	if err != nil {
		return fmt.Errorf("encoding serving key: %w", err)
	}

	c.caCertPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	return writeFiles(map[string][]byte{
		c.caCertFile:  c.caCertPEM,
		c.servingCert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: servingDER}),
		c.servingKey:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: servingKeyDER}),
	})
}

// writeServiceAccountKeys creates the RSA key pair kube-apiserver signs and
// verifies service-account tokens with (kube-controller-manager signs too).
func (c *credentials) writeServiceAccountKeys() error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("generating service-account key: %w", err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return fmt.Errorf("encoding service-account public key: %w", err)
	}
	return writeFiles(map[string][]byte{
		c.saPrivateKey: pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
		c.saPublicKey:  pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}),
	})
}

// writeTokens writes kube-apiserver's static token file: the admin and
// every extra user, all in system:masters, which RBAC always allows.
func (c *credentials) writeTokens(users []string) error {
	var lines strings.Builder
	c.userTokens = map[string]string{}
	for _, user := range append([]string{adminUser}, users...) {
		token := make([]byte, 24)
		if _, err := rand.Read(token); err != nil {
			return fmt.Errorf("generating a token for %s: %w", user, err)
		}
		c.userTokens[user] = hex.EncodeToString(token)
		fmt.Fprintf(&lines, "%s,%s,%s,\"system:masters\"\n", c.userTokens[user], user, user)
	}
	c.adminToken = c.userTokens[adminUser]
	delete(c.userTokens, adminUser)
	return writeFiles(map[string][]byte{c.tokenFile: []byte(lines.String())})
}

// writeKubeconfig writes the admin kubeconfig that kube-controller-manager,
// kube-scheduler and people (kubectl --kubeconfig) use.
func (c *credentials) writeKubeconfig() error {
	return c.writeKubeconfigFor(c.kubeconfig, adminUser, c.adminToken)
}

// writeKubeconfigFor writes a kubeconfig for the cluster that authenticates
// with a bearer token: the admin's, or one of Options.Users'.
func (c *credentials) writeKubeconfigFor(path, user, token string) error {
	const name = "s3gw-local"
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: c.apiserverHost, CertificateAuthorityData: c.caCertPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: user}
	cfg.CurrentContext = name
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return nil
}

func writeFiles(files map[string][]byte) error {
	for path, data := range files {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	return nil
}

func randomSerial() *big.Int {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		// crypto/rand does not fail on Linux; a fixed serial would still be valid.
		return big.NewInt(1)
	}
	return serial
}
