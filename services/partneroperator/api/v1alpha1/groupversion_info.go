// Package v1alpha1 is the partners.partnerapi.dev/v1alpha1 API: the PartnerClient
// resource, the source of truth for a partner client registered in identity.
//
// +kubebuilder:object:generate=true
// +groupName=partners.partnerapi.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "partners.partnerapi.dev", Version: "v1alpha1"}

	// SchemeBuilder registers the types of this API in a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types of this API to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &PartnerClient{}, &PartnerClientList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
