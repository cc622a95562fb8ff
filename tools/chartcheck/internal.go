package chartcheck

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Port names of a process's two listeners: the public one (HTTP_ADDR) and the
// internal one (INTERNAL_HTTP_ADDR), which serves /metrics and identity's admin API.
const (
	PublicPort   = "http"
	InternalPort = "internal"
	// InternalServiceSuffix ends the name of the only Services that may expose
	// the internal port.
	InternalServiceSuffix = "-internal"
)

// apiProcess is a Deployment container that serves the API: it has a port named PublicPort.
type apiProcess struct {
	obj      *Object
	labels   labels.Set
	internal int32 // container port number of InternalPort, 0 when missing
}

func apiProcesses(rel *Release) []apiProcess {
	var out []apiProcess
	for _, o := range rel.Objects {
		d, ok := o.Obj.(*appsv1.Deployment)
		if !ok {
			continue
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			if containerPort(c, PublicPort) == 0 {
				continue
			}
			out = append(out, apiProcess{obj: o, labels: labels.Set(d.Spec.Template.Labels), internal: containerPort(c, InternalPort)})
		}
	}
	return out
}

func containerPort(c corev1.Container, name string) int32 {
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	return 0
}

// CheckInternalListener: every /metrics and identity's admin API, which the processes
// serve only on INTERNAL_HTTP_ADDR, are reachable only through the "<fullname>-internal"
// ClusterIP Services and from inside the cluster.
//   - Each serving container has the ports "http" and "internal"; HTTP_ADDR and
//     INTERNAL_HTTP_ADDR (ConfigMap or env) listen on exactly those; the prometheus.io/port
//     annotation names the internal one.
//   - A Service not named "*-internal" exposes no port targeting the internal port; a
//     "*-internal" Service is ClusterIP and exposes nothing but it.
//   - No Ingress backend is a "*-internal" Service.
//   - Each process is selected by a NetworkPolicy, and every NetworkPolicy rule that admits
//     the internal port names its peers: never everyone, an ipBlock, or every namespace.
func CheckInternalListener(rel *Release) []string {
	var problems []string
	procs := apiProcesses(rel)
	for _, p := range procs {
		problems = append(problems, listenAddresses(rel, p)...)
	}
	internalOf := func(sel labels.Selector) []apiProcess {
		var out []apiProcess
		for _, p := range procs {
			if p.internal != 0 && sel.Matches(p.labels) {
				out = append(out, p)
			}
		}
		return out
	}
	guarded := map[*Object]bool{}
	for _, o := range rel.Objects {
		switch x := o.Obj.(type) {
		case *corev1.Service:
			targets := internalOf(labels.SelectorFromSet(x.Spec.Selector))
			if len(x.Spec.Selector) == 0 || len(targets) == 0 {
				continue
			}
			internalName := strings.HasSuffix(o.Name, InternalServiceSuffix)
			if internalName && x.Spec.Type != "" && x.Spec.Type != corev1.ServiceTypeClusterIP {
				problems = append(problems, fmt.Sprintf("%s: type %s; the internal port may only be a ClusterIP Service", o.ID(), x.Spec.Type))
			}
			for _, sp := range x.Spec.Ports {
				toInternal := targetsInternal(sp.TargetPort, sp.Port, targets[0].internal)
				switch {
				case toInternal && !internalName:
					problems = append(problems, fmt.Sprintf("%s: port %q exposes the internal port (metrics, admin API) on a public Service; only a Service named *%s may", o.ID(), sp.Name, InternalServiceSuffix))
				case !toInternal && internalName:
					problems = append(problems, fmt.Sprintf("%s: port %q is not the internal port; an internal Service exposes nothing else", o.ID(), sp.Name))
				}
			}
		case *networkingv1.Ingress:
			for _, rule := range x.Spec.Rules {
				if rule.HTTP == nil {
					continue
				}
				for _, path := range rule.HTTP.Paths {
					if b := path.Backend.Service; b != nil && strings.HasSuffix(b.Name, InternalServiceSuffix) {
						problems = append(problems, fmt.Sprintf("%s: path %q targets the internal Service %s", o.ID(), path.Path, b.Name))
					}
				}
			}
			if b := x.Spec.DefaultBackend; b != nil && b.Service != nil && strings.HasSuffix(b.Service.Name, InternalServiceSuffix) {
				problems = append(problems, fmt.Sprintf("%s: default backend targets the internal Service %s", o.ID(), b.Service.Name))
			}
		case *networkingv1.NetworkPolicy:
			sel, err := metav1.LabelSelectorAsSelector(&x.Spec.PodSelector)
			if err != nil {
				continue
			}
			targets := internalOf(sel)
			if len(targets) == 0 {
				continue
			}
			ingress := len(x.Spec.PolicyTypes) == 0
			for _, t := range x.Spec.PolicyTypes {
				ingress = ingress || t == networkingv1.PolicyTypeIngress
			}
			if !ingress {
				continue
			}
			for _, t := range targets {
				guarded[t.obj] = true
			}
			for i, rule := range x.Spec.Ingress {
				if !admitsPort(rule.Ports, targets[0].internal) {
					continue
				}
				if len(rule.From) == 0 {
					problems = append(problems, fmt.Sprintf("%s: ingress[%d] admits the internal port from anywhere", o.ID(), i))
				}
				for j, peer := range rule.From {
					switch {
					case peer.IPBlock != nil:
						problems = append(problems, fmt.Sprintf("%s: ingress[%d].from[%d] admits the internal port from the address block %s", o.ID(), i, j, peer.IPBlock.CIDR))
					case peer.NamespaceSelector != nil && len(peer.NamespaceSelector.MatchLabels) == 0 && len(peer.NamespaceSelector.MatchExpressions) == 0:
						problems = append(problems, fmt.Sprintf("%s: ingress[%d].from[%d] admits the internal port from every namespace", o.ID(), i, j))
					}
				}
			}
		}
	}
	for _, p := range procs {
		if p.internal != 0 && !guarded[p.obj] {
			problems = append(problems, fmt.Sprintf("%s: no NetworkPolicy restricts its internal port", p.obj.ID()))
		}
	}
	return problems
}

// listenAddresses: the process listens on its named container ports, and Prometheus is
// pointed at the internal one.
func listenAddresses(rel *Release, p apiProcess) []string {
	var problems []string
	if p.internal == 0 {
		return []string{fmt.Sprintf("%s: no container port named %q for INTERNAL_HTTP_ADDR", p.obj.ID(), InternalPort)}
	}
	pt, _ := PodTemplate(p.obj)
	for _, c := range pt.Spec.Containers {
		public := containerPort(c, PublicPort)
		if public == 0 {
			continue
		}
		env := containerEnv(rel, c)
		for name, want := range map[string]int32{"HTTP_ADDR": public, "INTERNAL_HTTP_ADDR": p.internal} {
			_, port, err := net.SplitHostPort(env[name])
			if err != nil || port != strconv.Itoa(int(want)) {
				problems = append(problems, fmt.Sprintf("%s container %q: %s=%q, want it to listen on container port %d", p.obj.ID(), c.Name, name, env[name], want))
			}
		}
	}
	if port, ok := pt.Annotations["prometheus.io/port"]; ok && port != strconv.Itoa(int(p.internal)) {
		problems = append(problems, fmt.Sprintf("%s: prometheus.io/port is %s; /metrics is only on the internal port %d", p.obj.ID(), port, p.internal))
	}
	return problems
}

// containerEnv is a container's plain environment: its ConfigMaps (envFrom) overridden by env values.
func containerEnv(rel *Release, c corev1.Container) map[string]string {
	env := map[string]string{}
	for _, ef := range c.EnvFrom {
		if ef.ConfigMapRef == nil {
			continue
		}
		if cm := find(rel, "ConfigMap", ef.ConfigMapRef.Name); cm != nil {
			for k, v := range cm.Obj.(*corev1.ConfigMap).Data {
				env[ef.Prefix+k] = v
			}
		}
	}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			env[e.Name] = e.Value
		}
	}
	return env
}

func targetsInternal(target intstr.IntOrString, port, internal int32) bool {
	switch {
	case target.Type == intstr.String:
		return target.StrVal == InternalPort
	case target.IntVal == 0:
		return port == internal // targetPort defaults to port
	}
	return target.IntVal == internal
}

// admitsPort: a rule without ports admits every port, a port without a number every port.
func admitsPort(ports []networkingv1.NetworkPolicyPort, internal int32) bool {
	if len(ports) == 0 {
		return true
	}
	for _, p := range ports {
		switch {
		case p.Port == nil:
			return true
		case p.Port.Type == intstr.String:
			if p.Port.StrVal == InternalPort {
				return true
			}
		case p.Port.IntVal == internal, p.EndPort != nil && p.Port.IntVal <= internal && internal <= *p.EndPort:
			return true
		}
	}
	return false
}
