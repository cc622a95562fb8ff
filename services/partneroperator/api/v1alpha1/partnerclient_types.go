package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Client types and states, as identity names them.
const (
	TypePublic       = "public"
	TypeConfidential = "confidential"
	StateApproved    = "approved"
	StateSuspended   = "suspended"
)

// SecretManagedExternallyAnnotation, set to "true" on a PartnerClient, says its
// Secret is written by something else (External Secrets, sealed secrets): the
// operator waits for it instead of generating one.
const SecretManagedExternallyAnnotation = "partners.partnerapi.dev/secret-managed-externally"

// Condition types.
const (
	// ConditionReady is True when identity holds the client exactly as the spec says.
	ConditionReady = "Ready"
	// ConditionSecretReady is True when a confidential client's Secret exists and
	// identity accepts its value (always True for a public client).
	ConditionSecretReady = "SecretReady"
)

// The enum below lists contracts.ScopeNames(); TestScopeEnumIsTheAPIScopes holds the
// two together.

// Scope is one scope of the API.
// +kubebuilder:validation:Enum=svc.restaurant.read;svc.organization.read;svc.orders.read;svc.accounting.read;svc.analytics.read;svc.accounting.corrections.write;svc.menu.read;svc.menu.structure.write;svc.menu.publish.write;svc.catalog.import.write;svc.webhooks.manage
type Scope string

// SecretReference names the Secret holding a confidential client's secret, in the
// resource's namespace.
type SecretReference struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Key in the Secret's data holding the client secret.
	// +kubebuilder:default=clientSecret
	// +optional
	Key string `json:"key,omitempty"`
}

// PartnerClientSpec is the partner client as identity must hold it.
// +kubebuilder:validation:XValidation:rule="self.type != 'confidential' || has(self.secretRef)",message="a confidential client needs secretRef"
type PartnerClientSpec struct {
	// ClientID is the OAuth client_id; it cannot change.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="clientId is immutable"
	ClientID string `json:"clientId"`
	// DisplayName is what a restaurant owner sees on the consent page.
	// +kubebuilder:validation:MinLength=1
	DisplayName string `json:"displayName"`
	// Type is public (PKCE only) or confidential (with a client secret).
	// +kubebuilder:validation:Enum=public;confidential
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="type is immutable"
	Type string `json:"type"`
	// RedirectURIs are matched exactly.
	// +kubebuilder:validation:MinItems=1
	RedirectURIs []string `json:"redirectUris"`
	// AllowedScopes are the scopes the client may ask for.
	// +kubebuilder:validation:MinItems=1
	// +listType=set
	AllowedScopes []Scope `json:"allowedScopes"`
	// State is approved or suspended; a suspended client cannot get tokens.
	// +kubebuilder:validation:Enum=approved;suspended
	// +kubebuilder:default=approved
	// +optional
	State string `json:"state,omitempty"`
	// SecretRef is required for a confidential client.
	// +optional
	SecretRef *SecretReference `json:"secretRef,omitempty"`
}

// PartnerClientStatus is what the operator last saw and did.
type PartnerClientStatus struct {
	// ObservedGeneration is the generation the conditions describe.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Ready and SecretReady.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// IdentityStatus is the client's status in identity (approved, suspended).
	// +optional
	IdentityStatus string `json:"identityStatus,omitempty"`
	// SecretVersion is the uid/resourceVersion of the Secret whose value identity
	// holds (never the value).
	// +optional
	SecretVersion string `json:"secretVersion,omitempty"`
	// LastReconcileTime is when identity was last compared with the spec.
	// +optional
	LastReconcileTime *metav1.Time `json:"lastReconcileTime,omitempty"`
}

// PartnerClient is a partner's OAuth client, reconciled into identity.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=pc
// +kubebuilder:printcolumn:name="Client ID",type=string,JSONPath=`.spec.clientId`
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.spec.state`
// +kubebuilder:printcolumn:name="Identity",type=string,JSONPath=`.status.identityStatus`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
type PartnerClient struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   PartnerClientSpec   `json:"spec"`
	Status PartnerClientStatus `json:"status,omitempty"`
}

// PartnerClientList is a list of PartnerClient.
// +kubebuilder:object:root=true
type PartnerClientList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PartnerClient `json:"items"`
}
