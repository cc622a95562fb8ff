package chartcheck

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"partnerapi.dev/tools/registry"
)

// callsKubernetesAPI reports whether o belongs to a process the registry marks as
// needing the Kubernetes API (an operator): only its pods may mount a token.
func callsKubernetesAPI(o *Object) bool {
	p, ok := registry.System().Get(o.Labels["app.kubernetes.io/name"])
	return ok && p.Kubernetes
}

// RequiredLabels must be on every rendered object and on every pod template.
var RequiredLabels = []string{
	"app.kubernetes.io/name",
	"app.kubernetes.io/instance",
	"app.kubernetes.io/version",
	"app.kubernetes.io/component",
	"app.kubernetes.io/part-of",
	"app.kubernetes.io/managed-by",
	"helm.sh/chart",
}

// PodTemplate returns the pod template of a workload object.
func PodTemplate(o *Object) (*corev1.PodTemplateSpec, bool) {
	switch w := o.Obj.(type) {
	case *appsv1.Deployment:
		return &w.Spec.Template, true
	case *appsv1.StatefulSet:
		return &w.Spec.Template, true
	case *appsv1.DaemonSet:
		return &w.Spec.Template, true
	case *batchv1.Job:
		return &w.Spec.Template, true
	case *batchv1.CronJob:
		return &w.Spec.JobTemplate.Spec.Template, true
	}
	return nil, false
}

// isLongRunning is true for workloads whose pods serve and so need probes.
func isLongRunning(o *Object) bool {
	switch o.Obj.(type) {
	case *appsv1.Deployment, *appsv1.StatefulSet, *appsv1.DaemonSet:
		return true
	}
	return false
}

// CheckLabels: the standard labels are on every object and every pod template.
func CheckLabels(rel *Release) []string {
	var problems []string
	for _, o := range rel.Objects {
		for _, l := range RequiredLabels {
			if o.Labels[l] == "" {
				problems = append(problems, fmt.Sprintf("%s: label %s is missing", o.ID(), l))
			}
		}
		if o.Labels["app.kubernetes.io/instance"] != "" && o.Labels["app.kubernetes.io/instance"] != rel.Name {
			problems = append(problems, fmt.Sprintf("%s: app.kubernetes.io/instance is %q, want the release name %q", o.ID(), o.Labels["app.kubernetes.io/instance"], rel.Name))
		}
		if pt, ok := PodTemplate(o); ok {
			for _, l := range RequiredLabels {
				if pt.Labels[l] == "" {
					problems = append(problems, fmt.Sprintf("%s: pod template label %s is missing", o.ID(), l))
				}
			}
		}
	}
	return problems
}

// CheckWorkloads: probes, resources and the restricted security context on every container.
func CheckWorkloads(rel *Release) []string {
	var problems []string
	for _, o := range rel.Objects {
		pt, ok := PodTemplate(o)
		if !ok {
			continue
		}
		ps := pt.Spec
		psc := ps.SecurityContext
		if psc == nil {
			psc = &corev1.PodSecurityContext{}
		}
		if (ps.AutomountServiceAccountToken == nil || *ps.AutomountServiceAccountToken) && !callsKubernetesAPI(o) {
			problems = append(problems, fmt.Sprintf("%s: automountServiceAccountToken must be false on the pod (only a process registered with kubernetes: true talks to the Kubernetes API)", o.ID()))
		}
		var containers []corev1.Container
		containers = append(containers, ps.InitContainers...)
		containers = append(containers, ps.Containers...)
		if len(ps.Containers) == 0 {
			problems = append(problems, fmt.Sprintf("%s: no containers", o.ID()))
		}
		for _, c := range containers {
			id := fmt.Sprintf("%s container %q", o.ID(), c.Name)
			if isLongRunning(o) && slices.ContainsFunc(ps.Containers, func(x corev1.Container) bool { return x.Name == c.Name }) {
				if c.LivenessProbe == nil {
					problems = append(problems, id+": no livenessProbe")
				}
				if c.ReadinessProbe == nil {
					problems = append(problems, id+": no readinessProbe")
				}
			}
			for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				if _, ok := c.Resources.Requests[r]; !ok {
					problems = append(problems, fmt.Sprintf("%s: no resources.requests.%s", id, r))
				}
				if _, ok := c.Resources.Limits[r]; !ok {
					problems = append(problems, fmt.Sprintf("%s: no resources.limits.%s", id, r))
				}
			}
			for r, req := range c.Resources.Requests {
				if lim, ok := c.Resources.Limits[r]; ok && req.Cmp(lim) > 0 {
					problems = append(problems, fmt.Sprintf("%s: resources.requests.%s %s exceeds the limit %s", id, r, req.String(), lim.String()))
				}
			}
			if c.Image == "" || strings.HasSuffix(c.Image, ":") || strings.HasSuffix(c.Image, ":latest") {
				problems = append(problems, fmt.Sprintf("%s: image %q needs an explicit tag", id, c.Image))
			}
			sc := c.SecurityContext
			if sc == nil {
				sc = &corev1.SecurityContext{}
			}
			if !isTrue(sc.RunAsNonRoot) && !isTrue(psc.RunAsNonRoot) {
				problems = append(problems, id+": runAsNonRoot is not true")
			}
			if uid := firstInt64(sc.RunAsUser, psc.RunAsUser); uid != nil && *uid == 0 {
				problems = append(problems, id+": runAsUser is 0")
			}
			if !isTrue(sc.ReadOnlyRootFilesystem) {
				problems = append(problems, id+": readOnlyRootFilesystem is not true")
			}
			if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
				problems = append(problems, id+": allowPrivilegeEscalation is not false")
			}
			if sc.Privileged != nil && *sc.Privileged {
				problems = append(problems, id+": privileged")
			}
			if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, corev1.Capability("ALL")) {
				problems = append(problems, id+": capabilities do not drop ALL")
			} else if len(sc.Capabilities.Add) > 0 {
				problems = append(problems, fmt.Sprintf("%s: adds capabilities %v", id, sc.Capabilities.Add))
			}
			seccomp := psc.SeccompProfile
			if sc.SeccompProfile != nil {
				seccomp = sc.SeccompProfile
			}
			if seccomp == nil || seccomp.Type != corev1.SeccompProfileTypeRuntimeDefault {
				problems = append(problems, id+": seccompProfile is not RuntimeDefault")
			}
		}
	}
	return problems
}

func isTrue(b *bool) bool { return b != nil && *b }

func firstInt64(vs ...*int64) *int64 {
	for _, v := range vs {
		if v != nil {
			return v
		}
	}
	return nil
}

// podTemplates of the release's long-running workloads and of its Jobs, by object.
func podTemplates(rel *Release) (serving, batch map[*Object]labels.Set) {
	serving, batch = map[*Object]labels.Set{}, map[*Object]labels.Set{}
	for _, o := range rel.Objects {
		if pt, ok := PodTemplate(o); ok {
			if isLongRunning(o) {
				serving[o] = labels.Set(pt.Labels)
			} else {
				batch[o] = labels.Set(pt.Labels)
			}
		}
	}
	return serving, batch
}

func matching(sel labels.Selector, pods map[*Object]labels.Set) []*Object {
	var out []*Object
	for o, l := range pods {
		if sel.Matches(l) {
			out = append(out, o)
		}
	}
	slices.SortFunc(out, func(a, b *Object) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func names(objs []*Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GVK.Kind+"/"+o.Name)
	}
	return out
}

// CheckSelectors: every selector selects the pods it is meant for and nothing else.
//   - Deployment/StatefulSet selectors match their own pod template.
//   - Service, PDB and NetworkPolicy selectors match exactly one serving workload and no Job
//     pod (a migration pod must never receive traffic or count for a disruption budget).
//   - Ingress backends are rendered Services and ports.
//   - HPA targets exist, and their Deployment leaves spec.replicas to the HPA.
//   - NetworkPolicy "from" pod selectors without a namespace selector match a workload of the
//     release, when checkPeers is set (a service chart alone has no gateway to match).
func CheckSelectors(rel *Release, checkPeers bool) []string {
	var problems []string
	serving, batch := podTemplates(rel)
	selects := func(o *Object, what string, ls *metav1.LabelSelector) {
		if ls == nil || (len(ls.MatchLabels) == 0 && len(ls.MatchExpressions) == 0) {
			problems = append(problems, fmt.Sprintf("%s: %s is empty and would select every pod in the namespace", o.ID(), what))
			return
		}
		sel, err := metav1.LabelSelectorAsSelector(ls)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %s: %v", o.ID(), what, err))
			return
		}
		if m := matching(sel, serving); len(m) != 1 {
			problems = append(problems, fmt.Sprintf("%s: %s %s matches %d workloads %v, want exactly one", o.ID(), what, sel, len(m), names(m)))
		}
		if m := matching(sel, batch); len(m) > 0 {
			problems = append(problems, fmt.Sprintf("%s: %s %s also matches the pods of %v", o.ID(), what, sel, names(m)))
		}
	}
	hpaTargets := map[string]bool{}
	for _, o := range rel.Objects {
		switch x := o.Obj.(type) {
		case *appsv1.Deployment:
			problems = append(problems, ownSelector(o, x.Spec.Selector, x.Spec.Template.Labels)...)
		case *appsv1.StatefulSet:
			problems = append(problems, ownSelector(o, x.Spec.Selector, x.Spec.Template.Labels)...)
			if x.Spec.ServiceName != "" && find(rel, "Service", x.Spec.ServiceName) == nil {
				problems = append(problems, fmt.Sprintf("%s: serviceName %q is not a rendered Service", o.ID(), x.Spec.ServiceName))
			}
		case *corev1.Service:
			if x.Spec.Type != corev1.ServiceTypeExternalName {
				selects(o, "spec.selector", &metav1.LabelSelector{MatchLabels: x.Spec.Selector})
			}
			problems = append(problems, servicePorts(rel, o, x)...)
		case *policyv1.PodDisruptionBudget:
			selects(o, "spec.selector", x.Spec.Selector)
		case *networkingv1.NetworkPolicy:
			selects(o, "spec.podSelector", &x.Spec.PodSelector)
			if checkPeers {
				for i, rule := range x.Spec.Ingress {
					for j, peer := range rule.From {
						if peer.PodSelector == nil || peer.NamespaceSelector != nil {
							continue
						}
						sel, err := metav1.LabelSelectorAsSelector(peer.PodSelector)
						if err != nil {
							problems = append(problems, fmt.Sprintf("%s: ingress[%d].from[%d]: %v", o.ID(), i, j, err))
						} else if len(matching(sel, serving)) == 0 {
							problems = append(problems, fmt.Sprintf("%s: ingress[%d].from[%d] pod selector %s matches no workload of the release", o.ID(), i, j, sel))
						}
					}
				}
			}
		case *networkingv1.Ingress:
			for _, rule := range x.Spec.Rules {
				if rule.HTTP == nil {
					continue
				}
				for _, path := range rule.HTTP.Paths {
					b := path.Backend.Service
					if b == nil {
						continue
					}
					svc := find(rel, "Service", b.Name)
					if svc == nil {
						problems = append(problems, fmt.Sprintf("%s: backend Service %q is not rendered", o.ID(), b.Name))
						continue
					}
					if !slices.ContainsFunc(svc.Obj.(*corev1.Service).Spec.Ports, func(p corev1.ServicePort) bool {
						return (b.Port.Name != "" && p.Name == b.Port.Name) || (b.Port.Name == "" && p.Port == b.Port.Number)
					}) {
						problems = append(problems, fmt.Sprintf("%s: backend port %+v is not a port of %s", o.ID(), b.Port, svc.ID()))
					}
				}
			}
		case *autoscalingv2.HorizontalPodAutoscaler:
			ref := x.Spec.ScaleTargetRef
			t := find(rel, ref.Kind, ref.Name)
			if t == nil {
				problems = append(problems, fmt.Sprintf("%s: scaleTargetRef %s/%s is not rendered", o.ID(), ref.Kind, ref.Name))
				continue
			}
			hpaTargets[ref.Kind+"/"+ref.Name] = true
			if x.Spec.MinReplicas != nil && *x.Spec.MinReplicas > x.Spec.MaxReplicas {
				problems = append(problems, fmt.Sprintf("%s: minReplicas %d > maxReplicas %d", o.ID(), *x.Spec.MinReplicas, x.Spec.MaxReplicas))
			}
		}
	}
	for _, o := range rel.Objects {
		if d, ok := o.Obj.(*appsv1.Deployment); ok && hpaTargets["Deployment/"+o.Name] && d.Spec.Replicas != nil {
			problems = append(problems, fmt.Sprintf("%s: sets spec.replicas while an HPA scales it; every upgrade would reset the replica count", o.ID()))
		}
	}
	return problems
}

func ownSelector(o *Object, ls *metav1.LabelSelector, tmpl map[string]string) []string {
	if ls == nil {
		return []string{o.ID() + ": no selector"}
	}
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return []string{fmt.Sprintf("%s: selector: %v", o.ID(), err)}
	}
	if !sel.Matches(labels.Set(tmpl)) {
		return []string{fmt.Sprintf("%s: selector %s does not match its pod template labels %v", o.ID(), sel, tmpl)}
	}
	return nil
}

// servicePorts: named target ports exist on the selected pods.
func servicePorts(rel *Release, o *Object, svc *corev1.Service) []string {
	var problems []string
	serving, _ := podTemplates(rel)
	targets := matching(labels.SelectorFromSet(svc.Spec.Selector), serving)
	for _, p := range svc.Spec.Ports {
		if p.TargetPort.StrVal == "" {
			continue
		}
		for _, t := range targets {
			pt, _ := PodTemplate(t)
			if !hasContainerPort(pt.Spec, p.TargetPort.StrVal) {
				problems = append(problems, fmt.Sprintf("%s: targetPort %q is not a container port of %s", o.ID(), p.TargetPort.StrVal, t.ID()))
			}
		}
	}
	return problems
}

func hasContainerPort(ps corev1.PodSpec, name string) bool {
	for _, c := range ps.Containers {
		for _, p := range c.Ports {
			if p.Name == name {
				return true
			}
		}
	}
	return false
}

func find(rel *Release, kind, name string) *Object {
	for _, o := range rel.Objects {
		if o.GVK.Kind == kind && o.Name == name {
			return o
		}
	}
	return nil
}

// ExternalSecrets collects every non-empty string value of a key named
// "existingSecret" in the values: Secrets the operator promises to create.
func ExternalSecrets(values map[string]any) map[string]bool {
	out := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, vv := range x {
				if s, ok := vv.(string); ok && k == "existingSecret" && s != "" {
					out[s] = true
				}
				walk(vv)
			}
		case []any:
			for _, vv := range x {
				walk(vv)
			}
		}
	}
	walk(values)
	return out
}

type reference struct {
	kind, name, key, where string
	optional               bool
}

func podReferences(ps corev1.PodSpec) []reference {
	var refs []reference
	for _, c := range slices.Concat(ps.InitContainers, ps.Containers) {
		for _, ef := range c.EnvFrom {
			if r := ef.ConfigMapRef; r != nil {
				refs = append(refs, reference{"ConfigMap", r.Name, "", fmt.Sprintf("container %q envFrom", c.Name), isTrue(r.Optional)})
			}
			if r := ef.SecretRef; r != nil {
				refs = append(refs, reference{"Secret", r.Name, "", fmt.Sprintf("container %q envFrom", c.Name), isTrue(r.Optional)})
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom == nil {
				continue
			}
			if r := e.ValueFrom.ConfigMapKeyRef; r != nil {
				refs = append(refs, reference{"ConfigMap", r.Name, r.Key, fmt.Sprintf("container %q env %s", c.Name, e.Name), isTrue(r.Optional)})
			}
			if r := e.ValueFrom.SecretKeyRef; r != nil {
				refs = append(refs, reference{"Secret", r.Name, r.Key, fmt.Sprintf("container %q env %s", c.Name, e.Name), isTrue(r.Optional)})
			}
		}
	}
	for _, v := range ps.Volumes {
		if v.ConfigMap != nil {
			refs = append(refs, reference{"ConfigMap", v.ConfigMap.Name, "", "volume " + v.Name, isTrue(v.ConfigMap.Optional)})
		}
		if v.Secret != nil {
			refs = append(refs, reference{"Secret", v.Secret.SecretName, "", "volume " + v.Name, isTrue(v.Secret.Optional)})
		}
		if v.Projected != nil {
			for _, s := range v.Projected.Sources {
				if s.ConfigMap != nil {
					refs = append(refs, reference{"ConfigMap", s.ConfigMap.Name, "", "volume " + v.Name, isTrue(s.ConfigMap.Optional)})
				}
				if s.Secret != nil {
					refs = append(refs, reference{"Secret", s.Secret.Name, "", "volume " + v.Name, isTrue(s.Secret.Optional)})
				}
			}
		}
	}
	for _, s := range ps.ImagePullSecrets {
		refs = append(refs, reference{"Secret", s.Name, "", "imagePullSecrets", true})
	}
	if sa := ps.ServiceAccountName; sa != "" && sa != "default" {
		refs = append(refs, reference{"ServiceAccount", sa, "", "serviceAccountName", false})
	}
	return refs
}

// CheckReferences: every ConfigMap, Secret (and key) and ServiceAccount a pod uses is
// rendered by the release or named as external in the values (existingSecret). A hook
// workload may only use objects that exist when it runs: for a pre-install hook that
// means other pre-install hooks of a lower weight, or external objects.
func CheckReferences(rel *Release) []string {
	var problems []string
	external := ExternalSecrets(rel.Values)
	for _, o := range rel.Objects {
		pt, ok := PodTemplate(o)
		if !ok {
			continue
		}
		for _, r := range podReferences(pt.Spec) {
			if r.kind == "Secret" && external[r.name] {
				continue
			}
			target := find(rel, r.kind, r.name)
			if target == nil {
				if !r.optional {
					problems = append(problems, fmt.Sprintf("%s: %s uses %s %q, which is neither rendered nor listed as external (existingSecret) in the values", o.ID(), r.where, r.kind, r.name))
				}
				continue
			}
			if r.key != "" && !hasKey(target, r.key) && !r.optional {
				problems = append(problems, fmt.Sprintf("%s: %s uses key %q of %s, which has no such key", o.ID(), r.where, r.key, target.ID()))
			}
			for _, ev := range []string{"pre-install", "pre-upgrade"} {
				if !o.HasHook(ev) {
					continue
				}
				if !target.HasHook(ev) {
					if ev == "pre-install" {
						problems = append(problems, fmt.Sprintf("%s: %s hook uses %s, which Helm creates only after the %s hooks have run", o.ID(), ev, target.ID(), ev))
					}
					continue
				}
				if hookWeight(target) >= hookWeight(o) {
					problems = append(problems, fmt.Sprintf("%s: hook weight %d must be above the weight %d of %s it uses", o.ID(), hookWeight(o), hookWeight(target), target.ID()))
				}
			}
		}
	}
	return problems
}

func hookWeight(o *Object) int {
	w, _ := strconv.Atoi(o.Annotations["helm.sh/hook-weight"])
	return w
}

func hasKey(o *Object, key string) bool {
	switch x := o.Obj.(type) {
	case *corev1.Secret:
		_, a := x.Data[key]
		_, b := x.StringData[key]
		return a || b
	case *corev1.ConfigMap:
		_, a := x.Data[key]
		_, b := x.BinaryData[key]
		return a || b
	}
	return false
}

// CheckNames: names are valid for their kind and unique per kind.
func CheckNames(rel *Release) []string {
	var problems []string
	seen := map[string]bool{}
	for _, o := range rel.Objects {
		k := o.GVK.Kind + "/" + o.Name
		if seen[k] {
			problems = append(problems, fmt.Sprintf("%s: rendered twice", o.ID()))
		}
		seen[k] = true
		var errs []string
		switch o.GVK.Kind {
		case "Service":
			errs = validation.IsDNS1035Label(o.Name)
		case "Deployment", "StatefulSet", "Job":
			errs = validation.IsDNS1123Label(o.Name)
		default:
			errs = validation.IsDNS1123Subdomain(o.Name)
		}
		for _, e := range errs {
			problems = append(problems, fmt.Sprintf("%s: invalid name: %s", o.ID(), e))
		}
	}
	return problems
}

// CheckServiceAccounts: ServiceAccounts do not mount API tokens into pods, except an
// operator's.
func CheckServiceAccounts(rel *Release) []string {
	var problems []string
	for _, o := range rel.Objects {
		if sa, ok := o.Obj.(*corev1.ServiceAccount); ok && (sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken) && !callsKubernetesAPI(o) {
			problems = append(problems, o.ID()+": automountServiceAccountToken must be false")
		}
	}
	return problems
}

// Migration is what the checks need to know about a chart's migrations: the init
// container of its Deployment that runs "<name> migrate" before the process starts.
type Migration struct {
	Object    *Object
	Container corev1.Container
	// Process is the container it runs before.
	Process corev1.Container
}

// MigrationContainer names the init container that migrates.
const MigrationContainer = "migrate"

// Migrations returns the migration init containers by app.kubernetes.io/name.
func Migrations(rel *Release) map[string]Migration {
	out := map[string]Migration{}
	for _, o := range rel.Objects {
		d, ok := o.Obj.(*appsv1.Deployment)
		if !ok || len(d.Spec.Template.Spec.Containers) == 0 {
			continue
		}
		for _, c := range d.Spec.Template.Spec.InitContainers {
			if c.Name == MigrationContainer {
				out[o.Labels["app.kubernetes.io/name"]] = Migration{Object: o, Container: c, Process: d.Spec.Template.Spec.Containers[0]}
			}
		}
	}
	return out
}

// CheckUpstreams: each environment variable in keys of ConfigMap cm holds an http URL
// whose host is a Service of the release (short name or <name>.<namespace>[.svc...])
// and whose port is one of that Service's ports.
func CheckUpstreams(rel *Release, cm string, keys ...string) []string {
	o := find(rel, "ConfigMap", cm)
	if o == nil {
		return []string{fmt.Sprintf("ConfigMap %q is not rendered", cm)}
	}
	data := o.Obj.(*corev1.ConfigMap).Data
	var problems []string
	for _, k := range keys {
		raw := data[k]
		u, err := url.Parse(raw)
		if err != nil || u.Scheme != "http" || u.Hostname() == "" {
			problems = append(problems, fmt.Sprintf("%s: %s=%q is not an http URL", o.ID(), k, raw))
			continue
		}
		host := strings.Split(u.Hostname(), ".")
		if len(host) > 1 && host[1] != rel.Namespace {
			problems = append(problems, fmt.Sprintf("%s: %s=%q points at namespace %q, the release is in %q", o.ID(), k, raw, host[1], rel.Namespace))
		}
		svc := find(rel, "Service", host[0])
		if svc == nil {
			problems = append(problems, fmt.Sprintf("%s: %s=%q names no Service of the release", o.ID(), k, raw))
			continue
		}
		port := u.Port()
		if port == "" {
			port = "80"
		}
		if !slices.ContainsFunc(svc.Obj.(*corev1.Service).Spec.Ports, func(p corev1.ServicePort) bool { return strconv.Itoa(int(p.Port)) == port }) {
			problems = append(problems, fmt.Sprintf("%s: %s=%q uses port %s, which %s does not expose", o.ID(), k, raw, port, svc.ID()))
		}
	}
	return problems
}

// CheckAdmits: the NetworkPolicy of process callee (its fullname) admits the pods of
// process caller of the release on its public port.
func CheckAdmits(rel *Release, callee, caller string) []string {
	o := find(rel, "NetworkPolicy", callee)
	if o == nil {
		return []string{fmt.Sprintf("NetworkPolicy %q is not rendered", callee)}
	}
	for _, rule := range o.Obj.(*networkingv1.NetworkPolicy).Spec.Ingress {
		if !slices.ContainsFunc(rule.Ports, func(p networkingv1.NetworkPolicyPort) bool { return p.Port != nil && p.Port.String() == "http" }) {
			continue
		}
		for _, from := range rule.From {
			if from.PodSelector != nil && from.NamespaceSelector == nil && from.PodSelector.MatchLabels["app.kubernetes.io/name"] == caller &&
				from.PodSelector.MatchLabels["app.kubernetes.io/instance"] == rel.Name {
				return nil
			}
		}
	}
	return []string{fmt.Sprintf("%s: no ingress rule admits the %s pods of the release on the public port", o.ID(), caller)}
}
