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
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// metricsAuth is the filter of the secure metrics endpoint: the caller's
// bearer token must pass a TokenReview, and the user it names a
// SubjectAccessReview for the request's verb on its path (get /metrics).
// It does what controller-runtime's filters.WithAuthenticationAndAuthorization
// does, with the same cache lifetimes, but with client-go's typed clients:
// k8s.io/apiserver's authenticator and authorizer would link CEL, gRPC and
// OpenTelemetry into the manager (docs/design/manager-memory.md).
func metricsAuth(cfg *rest.Config, httpClient *http.Client) (metricsserver.Filter, error) {
	tokens, err := authenticationclient.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	access, err := authorizationclient.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	return newReviewer(tokens.TokenReviews(), access.SubjectAccessReviews()).filter, nil
}

// Cache lifetimes, as controller-runtime's filter has them.
const (
	authenticatedFor = time.Minute
	allowedFor       = 5 * time.Minute
	deniedFor        = 30 * time.Second
	// reviewTimeout bounds each review request.
	reviewTimeout = 10 * time.Second
)

type tokenReviews interface {
	Create(context.Context, *authenticationv1.TokenReview, metav1.CreateOptions) (*authenticationv1.TokenReview, error)
}

type accessReviews interface {
	Create(context.Context, *authorizationv1.SubjectAccessReview, metav1.CreateOptions) (*authorizationv1.SubjectAccessReview, error)
}

// reviewer authenticates and authorizes metrics requests through the API
// server, remembering answers for a while: Prometheus scrapes every few
// seconds with the same token.
type reviewer struct {
	tokens  tokenReviews
	access  accessReviews
	now     func() time.Time
	users   ttlCache[authenticationv1.UserInfo]
	allowed ttlCache[bool]
}

func newReviewer(tokens tokenReviews, access accessReviews) *reviewer {
	return &reviewer{tokens: tokens, access: access, now: time.Now}
}

func (r *reviewer) filter(log logr.Logger, next http.Handler) (http.Handler, error) {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		token, ok := bearerToken(req)
		if !ok {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		user, ok, err := r.authenticate(req.Context(), token)
		if err != nil {
			log.Error(err, "Authentication failed")
			http.Error(w, "Authentication failed", http.StatusInternalServerError)
			return
		}
		if !ok {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		allowed, err := r.authorize(req.Context(), user, strings.ToLower(req.Method), req.URL.Path)
		if err != nil {
			msg := fmt.Sprintf("Authorization for user %s failed", user.Username)
			log.Error(err, msg)
			http.Error(w, msg, http.StatusInternalServerError)
			return
		}
		if !allowed {
			http.Error(w, fmt.Sprintf("Authorization denied for user %s", user.Username), http.StatusForbidden)
			return
		}
		req.Header.Del("Authorization") // the handler has no use for it
		next.ServeHTTP(w, req)
	}), nil
}

// bearerToken is the token of an "Authorization: Bearer <token>" header.
func bearerToken(req *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(req.Header.Get("Authorization")), " ")
	token = strings.TrimSpace(token)
	return token, ok && strings.EqualFold(scheme, "bearer") && token != ""
}

// authenticate reviews the token; only authenticated users are remembered.
func (r *reviewer) authenticate(ctx context.Context, token string) (authenticationv1.UserInfo, bool, error) {
	key := fmt.Sprintf("%x", sha256.Sum256([]byte(token)))
	if user, ok := r.users.get(key, r.now()); ok {
		return user, true, nil
	}
	ctx, cancel := context.WithTimeout(ctx, reviewTimeout)
	defer cancel()
	review, err := r.tokens.Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}},
		metav1.CreateOptions{})
	if err != nil {
		return authenticationv1.UserInfo{}, false, fmt.Errorf("creating a TokenReview: %w", err)
	}
	if !review.Status.Authenticated {
		return authenticationv1.UserInfo{}, false, nil
	}
	r.users.put(key, review.Status.User, r.now(), authenticatedFor)
	return review.Status.User, true, nil
}

// authorize asks whether the user may use verb on the non-resource path.
func (r *reviewer) authorize(ctx context.Context, user authenticationv1.UserInfo, verb, path string) (bool, error) {
	spec := authorizationv1.SubjectAccessReviewSpec{User: user.Username, UID: user.UID, Groups: user.Groups,
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Verb: verb, Path: path}}
	if len(user.Extra) > 0 {
		spec.Extra = map[string]authorizationv1.ExtraValue{}
		for k, v := range user.Extra {
			spec.Extra[k] = authorizationv1.ExtraValue(v)
		}
	}
	key, err := json.Marshal(spec) // maps in key order
	if err != nil {
		return false, err
	}
	if allowed, ok := r.allowed.get(string(key), r.now()); ok {
		return allowed, nil
	}
	ctx, cancel := context.WithTimeout(ctx, reviewTimeout)
	defer cancel()
	review, err := r.access.Create(ctx, &authorizationv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("creating a SubjectAccessReview: %w", err)
	}
	allowed, ttl := review.Status.Allowed, allowedFor
	if !allowed {
		ttl = deniedFor
	}
	r.allowed.put(string(key), allowed, r.now(), ttl)
	return allowed, nil
}

// ttlCache remembers values until they expire; expired entries go on the
// next put, so it holds at most what one lifetime of requests brought.
type ttlCache[V any] struct {
	mu      sync.Mutex
	entries map[string]ttlEntry[V]
}

type ttlEntry[V any] struct {
	value   V
	expires time.Time
}

func (c *ttlCache[V]) get(key string, now time.Time) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || !now.Before(e.expires) {
		var zero V
		return zero, false
	}
	return e.value, true
}

func (c *ttlCache[V]) put(key string, value V, now time.Time, ttl time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]ttlEntry[V]{}
	}
	for k, e := range c.entries {
		if !now.Before(e.expires) {
			delete(c.entries, k)
		}
	}
	c.entries[key] = ttlEntry[V]{value: value, expires: now.Add(ttl)}
}
