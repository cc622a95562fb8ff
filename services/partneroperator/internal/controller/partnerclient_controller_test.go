package controller_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	corev1 "k8s.io/api/core/v1"

	partnersv1alpha1 "partnerapi.dev/services/partneroperator/api/v1alpha1"
	"partnerapi.dev/services/partneroperator/internal/controller"
	"partnerapi.dev/services/partneroperator/internal/identityadmin"
)

// TestPartnerClients runs the operator against a real kube-apiserver and etcd and a
// real identity process on Postgres, and follows one client through its life.
func TestPartnerClients(t *testing.T) {
	if testing.Short() {
		t.Skip("needs kube-apiserver, etcd and a built identity; skipped with -short")
	}
	cfg := startAPIServer(t)
	idp := startIdentity(t)
	admin := identityadmin.New(idp.adminURL, adminToken)
	k8s := startOperator(t, cfg, admin, 2*time.Second)
	ctx := t.Context()
	ns := "partners"
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKey{Namespace: ns, Name: "acme"}
	pc := &partnersv1alpha1.PartnerClient{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "acme"},
		Spec: partnersv1alpha1.PartnerClientSpec{
			ClientID: "acme-pos", DisplayName: "Acme POS", Type: partnersv1alpha1.TypePublic,
			RedirectURIs:  []string{"https://acme.example/callback"},
			AllowedScopes: []partnersv1alpha1.Scope{"svc.orders.read"},
		},
	}

	t.Run("create: Ready and the client approved in identity as specified", func(t *testing.T) {
		if err := k8s.Create(ctx, pc); err != nil {
			t.Fatal(err)
		}
		got := waitReady(t, k8s, key)
		if got.Status.IdentityStatus != "approved" || got.Status.LastReconcileTime == nil {
			t.Errorf("status = %+v, want identityStatus approved and a last reconcile time", got.Status)
		}
		if !meta.IsStatusConditionTrue(got.Status.Conditions, partnersv1alpha1.ConditionSecretReady) {
			t.Errorf("SecretReady of a public client = %+v, want True", got.Status.Conditions)
		}
		if !slices.Contains(got.Finalizers, controller.Finalizer) {
			t.Errorf("finalizers = %v, want %s", got.Finalizers, controller.Finalizer)
		}
		ic, err := admin.Get(ctx, "acme-pos")
		if err != nil {
			t.Fatal(err)
		}
		want := identityadmin.Client{ClientID: "acme-pos", Name: "Acme POS", Type: "public",
			RedirectURIs: []string{"https://acme.example/callback"}, AllowedScopes: []string{"svc.orders.read"}, Status: "approved"}
		if !sameClient(ic, want) {
			t.Errorf("identity holds %+v, want %+v", ic, want)
		}
	})

	t.Run("update scopes and name: identity updated", func(t *testing.T) {
		patch(t, k8s, key, func(pc *partnersv1alpha1.PartnerClient) {
			pc.Spec.AllowedScopes = []partnersv1alpha1.Scope{"svc.orders.read", "svc.restaurant.read"}
			pc.Spec.DisplayName = "Acme Point of Sale"
		})
		waitIdentity(t, admin, "acme-pos", func(c identityadmin.Client) bool {
			return c.Name == "Acme Point of Sale" && sameSet(c.AllowedScopes, []string{"svc.orders.read", "svc.restaurant.read"})
		})
		waitReady(t, k8s, key)
	})

	// The client the operator made is a real OAuth client: an owner approves
	// it through the sign-in and consent pages, and its tokens refresh.
	var tokens oauthTokens
	t.Run("usable in the OAuth flow: approved by an owner, tokens issued and refreshed", func(t *testing.T) {
		owner := idp.owner(t)
		tok := idp.approve(t, owner, "acme-pos", "https://acme.example/callback", "svc.restaurant.read svc.orders.read")
		if !sameSet(strings.Fields(tok.Scope), []string{"svc.restaurant.read", "svc.orders.read"}) {
			t.Errorf("scopes granted %q", tok.Scope)
		}
		status, next := idp.refresh(t, "acme-pos", tok.RefreshToken)
		if status != http.StatusOK || next.RefreshToken == "" {
			t.Fatalf("refresh of an approved client: %d", status)
		}
		tokens = next
	})

	t.Run("suspend: identity client suspended and its tokens refused", func(t *testing.T) {
		patch(t, k8s, key, func(pc *partnersv1alpha1.PartnerClient) { pc.Spec.State = partnersv1alpha1.StateSuspended })
		waitIdentity(t, admin, "acme-pos", func(c identityadmin.Client) bool { return c.Status == "suspended" })
		if tokens.RefreshToken == "" {
			t.Fatal("no tokens from the OAuth flow")
		}
		if status, _ := idp.refresh(t, "acme-pos", tokens.RefreshToken); status == http.StatusOK {
			t.Errorf("a suspended client's refresh token still works")
		}
		eventually(t, "status.identityStatus suspended", func() bool {
			var got partnersv1alpha1.PartnerClient
			return k8s.Get(ctx, key, &got) == nil && got.Status.IdentityStatus == "suspended" &&
				meta.IsStatusConditionTrue(got.Status.Conditions, partnersv1alpha1.ConditionReady)
		})
	})

	t.Run("drift in identity: repaired on resync with an Event", func(t *testing.T) {
		approved := "approved"
		if _, err := admin.Update(ctx, "acme-pos", identityadmin.Update{Status: &approved,
			RedirectURIs: []string{"https://attacker.example/callback"}}); err != nil {
			t.Fatal(err)
		}
		waitIdentity(t, admin, "acme-pos", func(c identityadmin.Client) bool {
			return c.Status == "suspended" && slices.Equal(c.RedirectURIs, []string{"https://acme.example/callback"})
		})
		ev := waitEvent(t, k8s, ns, controller.EventDriftRepair)
		if ev.Type != "Warning" || !strings.Contains(ev.Note, "redirectUris") || !strings.Contains(ev.Note, "state") ||
			ev.Regarding.Name != "acme" || ev.Regarding.Kind != "PartnerClient" {
			t.Errorf("drift event = type %s regarding %s/%s note %q, want a Warning about acme naming redirectUris and state",
				ev.Type, ev.Regarding.Kind, ev.Regarding.Name, ev.Note)
		}
	})

	t.Run("delete: client suspended and its grants revoked", func(t *testing.T) {
		patch(t, k8s, key, func(pc *partnersv1alpha1.PartnerClient) { pc.Spec.State = partnersv1alpha1.StateApproved })
		waitIdentity(t, admin, "acme-pos", func(c identityadmin.Client) bool { return c.Status == "approved" })
		// The owner's approval from the OAuth flow above.
		grantID := grantOf(t, tokens.AccessToken)
		if err := k8s.Delete(ctx, &partnersv1alpha1.PartnerClient{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "acme"}}); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the resource gone after its finalizer ran", func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, key, &partnersv1alpha1.PartnerClient{}))
		})
		ic, err := admin.Get(ctx, "acme-pos")
		if err != nil || ic.Status != "suspended" {
			t.Errorf("identity client after delete = %+v, %v; want suspended", ic, err)
		}
		grants, err := admin.Grants(ctx, "acme-pos")
		if err != nil {
			t.Fatal(err)
		}
		if len(grants) != 1 || grants[0].ID != grantID || grants[0].Status != "revoked" {
			t.Errorf("grants after delete = %+v, want %s revoked", grants, grantID)
		}
	})

	t.Run("confidential: Secret generated, owned, its value is the client's secret; suspended, it is refused", func(t *testing.T) {
		conf := confidential(ns, "kitchen", "kitchen-sync", "kitchen-secret", false)
		if err := k8s.Create(ctx, conf); err != nil {
			t.Fatal(err)
		}
		got := waitReady(t, k8s, client.ObjectKeyFromObject(conf))
		if c := meta.FindStatusCondition(got.Status.Conditions, partnersv1alpha1.ConditionSecretReady); c == nil || c.Status != metav1.ConditionTrue || c.Reason != controller.ReasonSecretApplied {
			t.Errorf("SecretReady = %+v, want True SecretApplied", c)
		}
		var s corev1.Secret
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "kitchen-secret"}, &s); err != nil {
			t.Fatal(err)
		}
		if len(s.OwnerReferences) != 1 || s.OwnerReferences[0].Kind != "PartnerClient" || s.OwnerReferences[0].Name != "kitchen" {
			t.Errorf("Secret owners = %+v, want the PartnerClient kitchen", s.OwnerReferences)
		}
		value := string(s.Data[controller.DefaultSecretKey])
		if !idp.authenticates(t, "kitchen-sync", value) || idp.authenticates(t, "kitchen-sync", value+"x") {
			t.Error("identity must accept the Secret's value, and only it")
		}
		assertNoSecretIn(t, k8s, ns, client.ObjectKeyFromObject(conf), value)

		// Suspended, the client is refused at identity's OAuth endpoints even with its secret.
		patch(t, k8s, client.ObjectKeyFromObject(conf), func(pc *partnersv1alpha1.PartnerClient) { pc.Spec.State = partnersv1alpha1.StateSuspended })
		eventually(t, "identity refusing the suspended client", func() bool { return !idp.authenticates(t, "kitchen-sync", value) })
	})

	t.Run("confidential, Secret managed externally: awaited, then applied, then rotated with overlap", func(t *testing.T) {
		conf := confidential(ns, "till", "till-pos", "till-secret", true)
		key := client.ObjectKeyFromObject(conf)
		if err := k8s.Create(ctx, conf); err != nil {
			t.Fatal(err)
		}
		eventually(t, "SecretReady=False SecretAwaited", func() bool {
			var got partnersv1alpha1.PartnerClient
			if k8s.Get(ctx, key, &got) != nil {
				return false
			}
			c := meta.FindStatusCondition(got.Status.Conditions, partnersv1alpha1.ConditionSecretReady)
			r := meta.FindStatusCondition(got.Status.Conditions, partnersv1alpha1.ConditionReady)
			return c != nil && c.Status == metav1.ConditionFalse && c.Reason == controller.ReasonSecretAwaited &&
				r != nil && r.Status == metav1.ConditionFalse
		})
		if _, err := admin.Get(ctx, "till-pos"); !errors.Is(err, identityadmin.ErrNotFound) {
			t.Errorf("while the Secret is awaited identity must not know the client; Get = %v", err)
		}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "till-secret"}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
			t.Errorf("the operator must not create an externally managed Secret; Get = %v", err)
		}

		first, second := "external-first-secret-0123456789", "external-second-secret-0123456789"
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "till-secret"},
			Data: map[string][]byte{controller.DefaultSecretKey: []byte(first)}}
		if err := k8s.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
		waitReady(t, k8s, key)
		if !idp.authenticates(t, "till-pos", first) {
			t.Fatal("identity must accept the external Secret's value")
		}

		s.Data[controller.DefaultSecretKey] = []byte(second)
		if err := k8s.Update(ctx, s); err != nil {
			t.Fatal(err)
		}
		eventually(t, "identity accepting the changed Secret's value", func() bool { return idp.authenticates(t, "till-pos", second) })
		if !idp.authenticates(t, "till-pos", first) {
			t.Error("during the overlap the previous secret must still work")
		}
		waitEvent(t, k8s, ns, controller.EventSecretRotated)
		assertNoSecretIn(t, k8s, ns, key, first, second)
	})

	t.Run("identity down: Ready=False with a reason, then Ready once it is back", func(t *testing.T) {
		idp.Stop()
		down := &partnersv1alpha1.PartnerClient{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "late"},
			Spec: partnersv1alpha1.PartnerClientSpec{ClientID: "late-pos", DisplayName: "Late POS", Type: partnersv1alpha1.TypePublic,
				RedirectURIs: []string{"https://late.example/callback"}, AllowedScopes: []partnersv1alpha1.Scope{"svc.menu.read"}},
		}
		if err := k8s.Create(ctx, down); err != nil {
			t.Fatal(err)
		}
		lateKey := client.ObjectKeyFromObject(down)
		eventually(t, "Ready=False reason IdentityUnavailable", func() bool {
			var got partnersv1alpha1.PartnerClient
			if k8s.Get(ctx, lateKey, &got) != nil {
				return false
			}
			c := meta.FindStatusCondition(got.Status.Conditions, partnersv1alpha1.ConditionReady)
			return c != nil && c.Status == metav1.ConditionFalse && c.Reason == controller.ReasonIdentityUnavailable
		})
		idp.Start()
		waitReady(t, k8s, lateKey)
		if ic, err := admin.Get(ctx, "late-pos"); err != nil || ic.Status != "approved" {
			t.Errorf("identity client after identity came back = %+v, %v; want approved", ic, err)
		}
	})
}

// TestPartnerClientValidation: the API server rejects what identity would reject,
// before the operator sees it.
func TestPartnerClientValidation(t *testing.T) {
	if testing.Short() {
		t.Skip("needs kube-apiserver and etcd; skipped with -short")
	}
	k8s, err := client.New(startAPIServer(t), client.Options{Scheme: testScheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	ok := partnersv1alpha1.PartnerClientSpec{ClientID: "x", DisplayName: "X", Type: "public",
		RedirectURIs: []string{"https://x.example/cb"}, AllowedScopes: []partnersv1alpha1.Scope{"svc.orders.read"}}
	for _, tc := range []struct {
		name, want string
		edit       func(*partnersv1alpha1.PartnerClientSpec)
	}{
		{"unknown scope", "allowedScopes[0]", func(s *partnersv1alpha1.PartnerClientSpec) {
			s.AllowedScopes = []partnersv1alpha1.Scope{"svc.everything"}
		}},
		{"unknown state", "spec.state", func(s *partnersv1alpha1.PartnerClientSpec) { s.State = "deleted" }},
		{"confidential without secretRef", "needs secretRef", func(s *partnersv1alpha1.PartnerClientSpec) { s.Type = "confidential" }},
		{"no redirect URI", "spec.redirectUris", func(s *partnersv1alpha1.PartnerClientSpec) { s.RedirectURIs = nil }},
	} {
		spec := ok
		tc.edit(&spec)
		err := k8s.Create(t.Context(), &partnersv1alpha1.PartnerClient{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "bad"}, Spec: spec})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: create error = %v, want Invalid mentioning %q", tc.name, err, tc.want)
		}
	}
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	// A bound so a broken operator fails the test instead of hanging it; the
	// operator is expected to get there in a few resyncs.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("gave up waiting for %s", what)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func waitReady(t *testing.T, k8s client.Client, key client.ObjectKey) partnersv1alpha1.PartnerClient {
	t.Helper()
	var got partnersv1alpha1.PartnerClient
	eventually(t, key.Name+" Ready=True for its generation", func() bool {
		if k8s.Get(t.Context(), key, &got) != nil {
			return false
		}
		c := meta.FindStatusCondition(got.Status.Conditions, partnersv1alpha1.ConditionReady)
		return c != nil && c.Status == metav1.ConditionTrue && c.Reason == controller.ReasonReconciled &&
			got.Status.ObservedGeneration == got.Generation
	})
	return got
}

func waitIdentity(t *testing.T, admin *identityadmin.API, id string, ok func(identityadmin.Client) bool) {
	t.Helper()
	eventually(t, "identity's client "+id, func() bool {
		c, err := admin.Get(t.Context(), id)
		return err == nil && ok(c)
	})
}

func waitEvent(t *testing.T, k8s client.Client, ns, reason string) eventsv1.Event {
	t.Helper()
	var found eventsv1.Event
	eventually(t, "an Event with reason "+reason, func() bool {
		var l eventsv1.EventList
		if k8s.List(t.Context(), &l, client.InNamespace(ns)) != nil {
			return false
		}
		for _, e := range l.Items {
			if e.Reason == reason {
				found = e
				return true
			}
		}
		return false
	})
	return found
}

func patch(t *testing.T, k8s client.Client, key client.ObjectKey, edit func(*partnersv1alpha1.PartnerClient)) {
	t.Helper()
	for {
		var pc partnersv1alpha1.PartnerClient
		if err := k8s.Get(t.Context(), key, &pc); err != nil {
			t.Fatal(err)
		}
		edit(&pc)
		err := k8s.Update(t.Context(), &pc)
		if err == nil {
			return
		}
		if !apierrors.IsConflict(err) {
			t.Fatal(err)
		}
	}
}

func sameClient(a, b identityadmin.Client) bool {
	return a.ClientID == b.ClientID && a.Name == b.Name && a.Type == b.Type && a.Status == b.Status &&
		slices.Equal(a.RedirectURIs, b.RedirectURIs) && sameSet(a.AllowedScopes, b.AllowedScopes)
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func confidential(ns, name, clientID, secretName string, external bool) *partnersv1alpha1.PartnerClient {
	pc := &partnersv1alpha1.PartnerClient{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: partnersv1alpha1.PartnerClientSpec{ClientID: clientID, DisplayName: name, Type: partnersv1alpha1.TypeConfidential,
			RedirectURIs: []string{"https://" + name + ".example/callback"}, AllowedScopes: []partnersv1alpha1.Scope{"svc.orders.read"},
			SecretRef: &partnersv1alpha1.SecretReference{Name: secretName}},
	}
	if external {
		pc.Annotations = map[string]string{partnersv1alpha1.SecretManagedExternallyAnnotation: "true"}
	}
	return pc
}

// assertNoSecretIn: no secret value appears in the resource (status included) or in
// any Event of the namespace.
func assertNoSecretIn(t *testing.T, k8s client.Client, ns string, key client.ObjectKey, secrets ...string) {
	t.Helper()
	var pc partnersv1alpha1.PartnerClient
	if err := k8s.Get(t.Context(), key, &pc); err != nil {
		t.Fatal(err)
	}
	var events eventsv1.EventList
	if err := k8s.List(t.Context(), &events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	b1, _ := json.Marshal(pc)
	b2, _ := json.Marshal(events)
	for _, s := range secrets {
		if strings.Contains(string(b1), s) || strings.Contains(string(b2), s) {
			t.Errorf("a client secret appears in the PartnerClient or an Event")
		}
	}
}
