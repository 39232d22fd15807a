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

package nhc

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// TestCREventsWakeNHC runs the Controller in a manager on the real clock:
// a remediation CR turning Succeeded=False wakes NHC, which escalates about
// a second later instead of at the step's timeout, and deleting a template
// disables it at once.
func TestCREventsWakeNHC(t *testing.T) {
	f := newFixture(t)
	g := f.g
	e := f.twoSteps("woken", 10*time.Minute, 10*time.Minute, func(e *Emulator) { e.Clock = clock.RealClock{} })
	f.node("w1", corev1.ConditionTrue)
	node := f.getNode("w1")
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse,
		LastTransitionTime: metav1.NewTime(time.Now().Add(-time.Hour))}}
	g.Expect(f.c.Status().Update(f.ctx, node)).To(Succeed())

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mgr, err := ctrl.NewManager(testConfig, ctrl.Options{Metrics: metricsserver.Options{BindAddress: "0"}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect((&Controller{Emulator: e}).SetupWithManager(mgr)).To(Succeed())
	go func() { _ = mgr.Start(ctx) }()

	g.Eventually(func() []unstructured.Unstructured { return f.crs(e, "w1") }).WithTimeout(30 * time.Second).Should(HaveLen(1))
	ours := f.onlyCR(e, "w1", "S3GWRemediation")

	f.setSucceeded(ours, metav1.ConditionFalse)
	g.Eventually(func() []unstructured.Unstructured { return f.crs(e, "w1") }).WithTimeout(30*time.Second).
		Should(HaveLen(2), "the CR's update woke NHC; the step's timeout is 10 minutes away")
	g.Expect(f.reread(ours).GetAnnotations()).To(HaveKey(timedOutAnnotation))

	f.deleteTemplate(e.Escalation[1].Template)
	g.Eventually(e.Disabled).WithTimeout(30*time.Second).Should(Equal(ReasonTemplateNotFound),
		"the template's deletion woke NHC")
}
