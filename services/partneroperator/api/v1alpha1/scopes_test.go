package v1alpha1_test

import (
	"os"
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"partnerapi.dev/services/contracts"
)

// TestScopeEnumIsTheAPIScopes: the CRD accepts exactly the API's scopes, so a
// PartnerClient with a scope identity does not know is refused at apply time.
func TestScopeEnumIsTheAPIScopes(t *testing.T) {
	b, err := os.ReadFile("../../config/crd/partners.partnerapi.dev_partnerclients.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(b, &crd); err != nil {
		t.Fatal(err)
	}
	if len(crd.Spec.Versions) != 1 {
		t.Fatalf("versions = %d, want 1", len(crd.Spec.Versions))
	}
	items := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["allowedScopes"].Items.Schema
	var got []string
	for _, e := range items.Enum {
		var s string
		if err := yaml.Unmarshal(e.Raw, &s); err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	if want := contracts.ScopeNames(); !slices.Equal(got, want) {
		t.Errorf("allowedScopes enum = %v\nwant contracts.ScopeNames() = %v\n(edit the +kubebuilder:validation:Enum of Scope and run make gen)", got, want)
	}
}
