// Package controller reconciles PartnerClient resources into identity's admin API:
// identity holds each client exactly as its resource says, changes made in identity
// directly are put back on the next resync, and a deleted resource leaves its client
// suspended with every grant revoked.
package controller

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	partnersv1alpha1 "partnerapi.dev/services/partneroperator/api/v1alpha1"
	"partnerapi.dev/services/partneroperator/internal/identityadmin"
)

// Finalizer keeps a PartnerClient until its identity client is suspended and its
// grants revoked.
const Finalizer = "partners.partnerapi.dev/suspend-in-identity"

// Condition reasons.
const (
	ReasonReconciled          = "Reconciled"
	ReasonIdentityUnavailable = "IdentityUnavailable"
	ReasonIdentityRejected    = "IdentityRejected"
	ReasonNotNeeded           = "NotNeeded"
	ReasonSecretApplied       = "SecretApplied"
	ReasonSecretAwaited       = "SecretAwaited"
	ReasonSecretInvalid       = "SecretInvalid"
)

// Event reasons.
const (
	EventCreated       = "Created"
	EventUpdated       = "Updated"
	EventDriftRepair   = "DriftRepaired"
	EventSuspended     = "SuspendedOnDelete"
	EventIdentityDown  = "IdentityUnavailable"
	EventSecretMade    = "SecretCreated"
	EventSecretRotated = "SecretRotated"
)

// PartnerClientReconciler reconciles PartnerClient resources into identity.
type PartnerClientReconciler struct {
	client.Client
	Identity *identityadmin.API
	Recorder events.EventRecorder
	// Resync is how often identity is compared with the spec when nothing changed
	// in Kubernetes: the interval within which drift is repaired.
	Resync time.Duration
	// SecretOverlap is how long a confidential client's previous secret keeps
	// working after its Secret changed.
	SecretOverlap time.Duration
}

// DefaultSecretKey is the key of the client secret in a Secret when secretRef
// names none.
const DefaultSecretKey = "clientSecret"

// clientSecret returns the confidential client's secret from its Secret and the
// Secret's version, creating the Secret (owned by pc) when it is missing and not
// managed externally. ready is false, with pc's conditions saying why, when there
// is no usable secret yet.
func (r *PartnerClientReconciler) clientSecret(ctx context.Context, pc *partnersv1alpha1.PartnerClient) (value, version string, ready bool, err error) {
	ref := pc.Spec.SecretRef
	key := ref.Key
	if key == "" {
		key = DefaultSecretKey
	}
	var s corev1.Secret
	err = r.Get(ctx, client.ObjectKey{Namespace: pc.Namespace, Name: ref.Name}, &s)
	switch {
	case apierrors.IsNotFound(err) && pc.Annotations[partnersv1alpha1.SecretManagedExternallyAnnotation] == "true":
		msg := fmt.Sprintf("waiting for Secret %s, which is managed externally", ref.Name)
		r.setConditions(pc, metav1.ConditionFalse, ReasonSecretAwaited, msg, metav1.ConditionFalse, ReasonSecretAwaited, msg)
		return "", "", false, nil
	case apierrors.IsNotFound(err):
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			return "", "", false, err
		}
		s = corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: pc.Namespace, Name: ref.Name},
			Type: corev1.SecretTypeOpaque, Data: map[string][]byte{key: []byte(base64.RawURLEncoding.EncodeToString(b))}}
		if err := controllerutil.SetControllerReference(pc, &s, r.Scheme()); err != nil {
			return "", "", false, err
		}
		if err := r.Create(ctx, &s); err != nil {
			return "", "", false, err
		}
		r.Recorder.Eventf(pc, nil, "Normal", EventSecretMade, "Create", "generated the client secret into Secret %s", ref.Name)
	case err != nil:
		return "", "", false, err
	}
	value = string(s.Data[key])
	if len(value) < 24 || len(value) > 72 {
		msg := fmt.Sprintf("Secret %s: key %s must hold 24 to 72 characters", ref.Name, key)
		r.setConditions(pc, metav1.ConditionFalse, ReasonSecretInvalid, msg, metav1.ConditionFalse, ReasonSecretInvalid, msg)
		return "", "", false, nil
	}
	return value, string(s.UID) + "/" + s.ResourceVersion, true, nil
}

// +kubebuilder:rbac:groups=partners.partnerapi.dev,resources=partnerclients,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=partners.partnerapi.dev,resources=partnerclients/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=partners.partnerapi.dev,resources=partnerclients/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;patch

// Reconcile makes identity hold the client as the resource says.
func (r *PartnerClientReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := logf.FromContext(ctx)
	var pc partnersv1alpha1.PartnerClient
	if err := r.Get(ctx, req.NamespacedName, &pc); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}

	if !pc.DeletionTimestamp.IsZero() {
		if !controllerutil.ContainsFinalizer(&pc, Finalizer) {
			return ctrl.Result{}, nil
		}
		if err := r.retire(ctx, &pc); err != nil {
			return ctrl.Result{}, r.identityFailed(ctx, &pc, err)
		}
		controllerutil.RemoveFinalizer(&pc, Finalizer)
		return ctrl.Result{}, r.Update(ctx, &pc)
	}
	if controllerutil.AddFinalizer(&pc, Finalizer) {
		if err := r.Update(ctx, &pc); err != nil {
			return ctrl.Result{}, err
		}
	}

	var secret, secretVersion string
	if pc.Spec.Type == partnersv1alpha1.TypeConfidential {
		var ready bool
		var err error
		secret, secretVersion, ready, err = r.clientSecret(ctx, &pc)
		if err != nil {
			return ctrl.Result{}, err
		}
		if !ready {
			// Registering the client now would give it a secret nobody holds.
			return ctrl.Result{}, r.Status().Update(ctx, &pc)
		}
	}

	want := desired(&pc)
	got, err := r.Identity.Get(ctx, pc.Spec.ClientID)
	switch {
	case errors.Is(err, identityadmin.ErrNotFound):
		// identity generates a secret for a confidential client; it is replaced
		// at once by the Secret's and never kept.
		got, _, err = r.Identity.Create(ctx, want)
		if err != nil {
			return ctrl.Result{}, r.identityFailed(ctx, &pc, err)
		}
		if secret != "" {
			if err := r.Identity.RotateSecret(ctx, pc.Spec.ClientID, secret, 0); err != nil {
				return ctrl.Result{}, r.identityFailed(ctx, &pc, err)
			}
			pc.Status.SecretVersion = secretVersion
		}
		r.Recorder.Eventf(&pc, nil, "Normal", EventCreated, "Create", "registered client %s in identity", pc.Spec.ClientID)
	case err != nil:
		return ctrl.Result{}, r.identityFailed(ctx, &pc, err)
	default:
		upd, changed := difference(got, want)
		if len(changed) > 0 {
			got, err = r.Identity.Update(ctx, pc.Spec.ClientID, upd)
			if err != nil {
				return ctrl.Result{}, r.identityFailed(ctx, &pc, err)
			}
			// A spec the operator already brought into identity that no longer
			// matches was changed in identity behind the resource's back.
			if pc.Status.ObservedGeneration == pc.Generation && meta.IsStatusConditionTrue(pc.Status.Conditions, partnersv1alpha1.ConditionReady) {
				log.Info("repaired drift in identity", "clientId", pc.Spec.ClientID, "fields", changed)
				r.Recorder.Eventf(&pc, nil, "Warning", EventDriftRepair, "Update",
					"identity's client %s differed from the resource in %s; put back", pc.Spec.ClientID, strings.Join(changed, ", "))
			} else {
				r.Recorder.Eventf(&pc, nil, "Normal", EventUpdated, "Update",
					"updated %s of client %s in identity", strings.Join(changed, ", "), pc.Spec.ClientID)
			}
		}
	}

	secretReason, secretMsg := ReasonNotNeeded, "a public client has no secret"
	if secret != "" {
		if pc.Status.SecretVersion != secretVersion {
			if err := r.Identity.RotateSecret(ctx, pc.Spec.ClientID, secret, r.SecretOverlap); err != nil {
				return ctrl.Result{}, r.identityFailed(ctx, &pc, err)
			}
			pc.Status.SecretVersion = secretVersion
			r.Recorder.Eventf(&pc, nil, "Normal", EventSecretRotated, "Rotate",
				"client %s now uses the value of Secret %s; the previous secret works for %s", pc.Spec.ClientID, pc.Spec.SecretRef.Name, r.SecretOverlap)
		}
		secretReason, secretMsg = ReasonSecretApplied, "identity holds the value of Secret "+pc.Spec.SecretRef.Name
	}
	pc.Status.IdentityStatus = got.Status
	r.setConditions(&pc, metav1.ConditionTrue, ReasonReconciled, "identity holds the client as specified",
		metav1.ConditionTrue, secretReason, secretMsg)
	if err := r.Status().Update(ctx, &pc); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: r.Resync}, nil
}

// retire suspends the client and revokes its grants, so a deleted resource never
// leaves a usable client behind.
func (r *PartnerClientReconciler) retire(ctx context.Context, pc *partnersv1alpha1.PartnerClient) error {
	suspended := partnersv1alpha1.StateSuspended
	if _, err := r.Identity.Update(ctx, pc.Spec.ClientID, identityadmin.Update{Status: &suspended}); err != nil {
		if errors.Is(err, identityadmin.ErrNotFound) {
			return nil
		}
		return err
	}
	grants, err := r.Identity.Grants(ctx, pc.Spec.ClientID)
	if err != nil {
		return err
	}
	revoked := 0
	for _, g := range grants {
		if g.Status != "active" {
			continue
		}
		if err := r.Identity.RevokeGrant(ctx, g.ID); err != nil {
			return err
		}
		revoked++
	}
	r.Recorder.Eventf(pc, nil, "Normal", EventSuspended, "Delete",
		"suspended client %s in identity and revoked %d grants", pc.Spec.ClientID, revoked)
	return nil
}

// identityFailed records why identity could not be brought in line and returns
// an error so the request is retried with the controller's exponential backoff.
func (r *PartnerClientReconciler) identityFailed(ctx context.Context, pc *partnersv1alpha1.PartnerClient, cause error) error {
	reason := ReasonIdentityUnavailable
	var status interface{ StatusCode() int }
	if errors.As(cause, &status) && status.StatusCode() < 500 {
		reason = ReasonIdentityRejected
	}
	// SecretReady stays as it was: identity being unreachable says nothing new about the Secret.
	secretStatus, secretReason, secretMsg := metav1.ConditionUnknown, "Pending", "identity has not been reached yet"
	if pc.Spec.Type == partnersv1alpha1.TypePublic {
		secretStatus, secretReason, secretMsg = metav1.ConditionTrue, ReasonNotNeeded, "a public client has no secret"
	} else if c := meta.FindStatusCondition(pc.Status.Conditions, partnersv1alpha1.ConditionSecretReady); c != nil {
		secretStatus, secretReason, secretMsg = c.Status, c.Reason, c.Message
	}
	r.setConditions(pc, metav1.ConditionFalse, reason, cause.Error(), secretStatus, secretReason, secretMsg)
	if pc.DeletionTimestamp.IsZero() {
		r.Recorder.Eventf(pc, nil, "Warning", EventIdentityDown, "Reconcile", "identity: %v", cause)
	}
	if err := r.Status().Update(ctx, pc); err != nil && !apierrors.IsNotFound(err) {
		return errors.Join(cause, err)
	}
	return fmt.Errorf("client %s: %w", pc.Spec.ClientID, cause)
}

func (r *PartnerClientReconciler) setConditions(pc *partnersv1alpha1.PartnerClient,
	ready metav1.ConditionStatus, readyReason, readyMsg string,
	secret metav1.ConditionStatus, secretReason, secretMsg string) {
	pc.Status.ObservedGeneration = pc.Generation
	now := metav1.Now()
	pc.Status.LastReconcileTime = &now
	meta.SetStatusCondition(&pc.Status.Conditions, metav1.Condition{Type: partnersv1alpha1.ConditionReady,
		Status: ready, Reason: readyReason, Message: readyMsg, ObservedGeneration: pc.Generation})
	meta.SetStatusCondition(&pc.Status.Conditions, metav1.Condition{Type: partnersv1alpha1.ConditionSecretReady,
		Status: secret, Reason: secretReason, Message: secretMsg, ObservedGeneration: pc.Generation})
}

func desired(pc *partnersv1alpha1.PartnerClient) identityadmin.NewClient {
	state := pc.Spec.State
	if state == "" {
		state = partnersv1alpha1.StateApproved
	}
	scopes := make([]string, len(pc.Spec.AllowedScopes))
	for i, s := range pc.Spec.AllowedScopes {
		scopes[i] = string(s)
	}
	return identityadmin.NewClient{ClientID: pc.Spec.ClientID, Name: pc.Spec.DisplayName, Type: pc.Spec.Type,
		RedirectURIs: pc.Spec.RedirectURIs, AllowedScopes: scopes, Status: state}
}

// difference is the update that makes got into want and the names of the fields
// it changes (the names go into Events, so they never include a secret).
func difference(got identityadmin.Client, want identityadmin.NewClient) (identityadmin.Update, []string) {
	var u identityadmin.Update
	var changed []string
	if got.Name != want.Name {
		u.Name = &want.Name
		changed = append(changed, "displayName")
	}
	if !slices.Equal(got.RedirectURIs, want.RedirectURIs) {
		u.RedirectURIs = want.RedirectURIs
		changed = append(changed, "redirectUris")
	}
	if !sameSet(got.AllowedScopes, want.AllowedScopes) {
		u.AllowedScopes = want.AllowedScopes
		changed = append(changed, "allowedScopes")
	}
	if got.Status != want.Status {
		u.Status = &want.Status
		changed = append(changed, "state")
	}
	return u, changed
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

const secretRefIndex = "spec.secretRef.name" //nolint:gosec // G101: a field index name, not a credential

// SetupWithManager watches PartnerClients. Status writes do not trigger a
// reconcile (the periodic resync covers identity); spec changes and deletion do.
func (r *PartnerClientReconciler) SetupWithManager(mgr ctrl.Manager) error {
	specOrDeletion := predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() || !e.ObjectNew.GetDeletionTimestamp().IsZero()
	}}
	// A Secret change (created at last, or rotated) reconciles the PartnerClients
	// that name it.
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &partnersv1alpha1.PartnerClient{}, secretRefIndex,
		func(o client.Object) []string {
			if ref := o.(*partnersv1alpha1.PartnerClient).Spec.SecretRef; ref != nil {
				return []string{ref.Name}
			}
			return nil
		}); err != nil {
		return err
	}
	bySecret := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
		var l partnersv1alpha1.PartnerClientList
		if err := r.List(ctx, &l, client.InNamespace(o.GetNamespace()), client.MatchingFields{secretRefIndex: o.GetName()}); err != nil {
			logf.FromContext(ctx).Error(err, "list PartnerClients of a Secret", "secret", o.GetName())
			return nil
		}
		var out []reconcile.Request
		for _, pc := range l.Items {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&pc)})
		}
		return out
	})
	return ctrl.NewControllerManagedBy(mgr).
		For(&partnersv1alpha1.PartnerClient{}, builder.WithPredicates(specOrDeletion)).
		Watches(&corev1.Secret{}, bySecret).
		Named("partnerclient").
		Complete(r)
}
