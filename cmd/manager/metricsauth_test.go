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
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/s3gw-tech/s3gw-remediation/test/cluster"
	"github.com/s3gw-tech/s3gw-remediation/test/testenv"
)

// fakeReviews answers reviews from maps and counts them.
type fakeReviews struct {
	users   map[string]authenticationv1.UserInfo // by token
	allowed map[string]bool                      // by user and path
	err     error
	calls   int
}

type fakeTokens struct{ *fakeReviews }

func (f fakeTokens) Create(_ context.Context, tr *authenticationv1.TokenReview, _ metav1.CreateOptions) (*authenticationv1.TokenReview, error) {
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	user, ok := f.users[tr.Spec.Token]
	tr.Status = authenticationv1.TokenReviewStatus{Authenticated: ok, User: user}
	return tr, nil
}

type fakeAccess struct{ *fakeReviews }

func (f fakeAccess) Create(_ context.Context, sar *authorizationv1.SubjectAccessReview, _ metav1.CreateOptions) (*authorizationv1.SubjectAccessReview, error) {
	f.calls++
	a := sar.Spec.NonResourceAttributes
	if sar.Spec.ResourceAttributes != nil || a == nil || a.Verb != "get" {
		return nil, errors.New("want a get of a non-resource URL")
	}
	sar.Status.Allowed = f.allowed[sar.Spec.User+" "+a.Path]
	return sar, nil
}

// serve sends one request through the filter and returns its status and
// what the handler behind it saw of the Authorization header.
func serve(t *testing.T, h http.Handler, authorization, path string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Header().Get("X-Seen-Authorization")
}

func behind(r *reviewer, t *testing.T) http.Handler {
	h, err := r.filter(logr.Discard(), http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("X-Seen-Authorization", req.Header.Get("Authorization"))
	}))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestMetricsAuthFilter(t *testing.T) {
	reviews := &fakeReviews{
		users:   map[string]authenticationv1.UserInfo{"prom": {Username: "prometheus"}, "other": {Username: "someone"}},
		allowed: map[string]bool{"prometheus /metrics": true},
	}
	r := newReviewer(fakeTokens{reviews}, fakeAccess{reviews})
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	r.now = func() time.Time { return now }
	h := behind(r, t)

	for _, tc := range []struct {
		name, authorization, path string
		want                      int
	}{
		{"no token", "", "/metrics", http.StatusUnauthorized},
		{"not a bearer token", "Basic cHJvbTpwcm9t", "/metrics", http.StatusUnauthorized},
		{"empty bearer token", "Bearer ", "/metrics", http.StatusUnauthorized},
		{"unknown token", "Bearer nobody", "/metrics", http.StatusUnauthorized},
		{"authenticated, not allowed", "Bearer other", "/metrics", http.StatusForbidden},
		{"allowed on /metrics only", "Bearer prom", "/debug", http.StatusForbidden},
		{"allowed", "bearer prom", "/metrics", http.StatusOK},
	} {
		if got, _ := serve(t, h, tc.authorization, tc.path); got != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, got, tc.want)
		}
	}
	if _, seen := serve(t, h, "Bearer prom", "/metrics"); seen != "" {
		t.Errorf("the handler saw the caller's token %q", seen)
	}

	// Answers are remembered: authenticated users for a minute, allowed
	// access for 5 minutes, denials for 30 s.
	reviews.calls = 0
	serve(t, h, "Bearer prom", "/metrics")
	serve(t, h, "Bearer other", "/metrics")
	if reviews.calls != 0 {
		t.Errorf("%d reviews for answers just given", reviews.calls)
	}
	now = now.Add(31 * time.Second)
	serve(t, h, "Bearer other", "/metrics")
	if reviews.calls != 1 {
		t.Errorf("%d reviews after the denial expired, want 1 (the user is still known)", reviews.calls)
	}
	now = now.Add(5 * time.Minute)
	reviews.calls = 0
	if got, _ := serve(t, h, "Bearer prom", "/metrics"); got != http.StatusOK || reviews.calls != 2 {
		t.Errorf("after 5 minutes: status %d with %d reviews, want 200 after 2", got, reviews.calls)
	}

	reviews.err = errors.New("API server down")
	if got, _ := serve(t, h, "Bearer new-token", "/metrics"); got != http.StatusInternalServerError {
		t.Errorf("failing review: status %d, want 500", got)
	}
}

// TestMetricsAuthAgainstTheAPIServer runs the filter with a real
// kube-apiserver's TokenReview and SubjectAccessReview: a ServiceAccount's
// token gets /metrics only once config/rbac's metrics-reader is bound to it.
func TestMetricsAuthAgainstTheAPIServer(t *testing.T) {
	started, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = started.Env.Stop() })
	ctx := t.Context()
	cs := kubernetes.NewForConfigOrDie(started.Config)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "scraper"}}
	if _, err := cs.CoreV1().ServiceAccounts("default").Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts("default").CreateToken(ctx, "scraper",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(600))}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	filter := func() http.Handler {
		f, err := metricsAuth(rest.CopyConfig(started.Config), &http.Client{Transport: mustTransport(t, started.Config)})
		if err != nil {
			t.Fatal(err)
		}
		h, err := f(logr.Discard(), http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	bearer := "Bearer " + tr.Status.Token
	if got, _ := serve(t, filter(), "Bearer not-a-token", "/metrics"); got != http.StatusUnauthorized {
		t.Errorf("invalid token: status %d, want 401", got)
	}
	if got, _ := serve(t, filter(), bearer, "/metrics"); got != http.StatusForbidden {
		t.Errorf("ServiceAccount without the role: status %d, want 403", got)
	}

	objs, err := cluster.ReadManifestFiles(filepath.Join(testenv.RepoRoot(), "config", "rbac", "metrics_reader_role.yaml"))
	if err != nil || len(objs) != 1 {
		t.Fatalf("reading the metrics-reader role: %v (%d objects)", err, len(objs))
	}
	if err := started.Client.Create(ctx, objs[0]); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "scraper-metrics"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: objs[0].GetName()},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: "scraper"}}}
	if err := started.Client.Create(ctx, binding); err != nil {
		t.Fatal(err)
	}
	// RBAC reaches the authorizer through its informers: ask until it does.
	var got int
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		got, _ = serve(t, filter(), bearer, "/metrics")
		return got == http.StatusOK, nil
	})
	if err != nil {
		t.Fatalf("with the metrics-reader role bound: status %d, want 200", got)
	}
	if got, _ := serve(t, filter(), bearer, "/debug/pprof/heap"); got != http.StatusForbidden {
		t.Errorf("another path: status %d, want 403", got)
	}
}

func mustTransport(t *testing.T, cfg *rest.Config) http.RoundTripper {
	t.Helper()
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}
