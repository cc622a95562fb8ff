package chartcheck

import (
	"path/filepath"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// readReplicaProcesses read from a streaming replica when DATABASE_READ_URL
// is set (docs/conventions.md).
var readReplicaProcesses = []string{"orders", "accounting", "events"}

// Each process that reads from a replica takes DATABASE_READ_URL from its
// own Secret, beside DATABASE_URL, when the Secret holds the key (an
// optional reference), in every environment; a Secret the chart creates
// holds the key only when given a value.
func TestReadReplicaURLFromTheSecret(t *testing.T) {
	root := repoRoot(t)
	for _, tc := range renderCases() {
		if !tc.umbrella {
			continue
		}
		rel := render(t, root, tc)
		for _, name := range readReplicaProcesses {
			o := find(rel, "Deployment", "rpa-"+name)
			if o == nil {
				t.Errorf("%s: no Deployment rpa-%s", tc.name, name)
				continue
			}
			refs := map[string]*corev1.SecretKeySelector{}
			for _, e := range o.Obj.(*appsv1.Deployment).Spec.Template.Spec.Containers[0].Env {
				if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
					refs[e.Name] = e.ValueFrom.SecretKeyRef
				}
			}
			primary, replica := refs["DATABASE_URL"], refs["DATABASE_READ_URL"]
			switch {
			case primary == nil || replica == nil:
				t.Errorf("%s: %s reads DATABASE_URL %v and DATABASE_READ_URL %v, want both from its Secret", tc.name, name, primary, replica)
			case replica.Name != primary.Name || replica.Key != "DATABASE_READ_URL" || !isTrue(replica.Optional):
				t.Errorf("%s: %s reads DATABASE_READ_URL as %+v, want the optional key DATABASE_READ_URL of %s", tc.name, name, replica, primary.Name)
			}
		}
	}

	c, err := LoadChart(filepath.Join(root, "charts", "orders"))
	if err != nil {
		t.Fatal(err)
	}
	for _, value := range []string{"", "postgres://orders@replica.invalid:5432/partnerapi"} {
		rel, err := Render(c, map[string]any{"secret": map[string]any{"values": map[string]any{"DATABASE_READ_URL": value}}}, "rpa", "partner-api")
		if err != nil {
			t.Fatal(err)
		}
		s := find(rel, "Secret", "rpa-orders")
		if s == nil {
			t.Fatal("the orders chart creates no Secret rpa-orders")
		}
		got, ok := s.Obj.(*corev1.Secret).StringData["DATABASE_READ_URL"]
		if ok != (value != "") || got != value {
			t.Errorf("given DATABASE_READ_URL %q, the Secret holds %q (key there: %v)", value, got, ok)
		}
	}
}
