package chartcheck

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"partnerapi.dev/tools/registry"
)

// ProcessEnv is the environment one container of the release starts with.
type ProcessEnv struct {
	Object    *Object
	Container string
	Env       map[string]string
}

// ReleaseEnvs resolves the environment of every container of every Deployment as the
// kubelet would: ConfigMaps (envFrom), plain values, and Secret keys from the Secrets
// the release renders. A key of a Secret the operator creates (existingSecret) gets a
// valid stand-in of the form the process registry declares for it, the same for the
// same key everywhere, so only what the values themselves decide is judged there.
func ReleaseEnvs(rel *Release) []ProcessEnv {
	var out []ProcessEnv
	for _, o := range rel.Objects {
		d, ok := o.Obj.(*appsv1.Deployment)
		if !ok {
			continue
		}
		for _, c := range slices.Concat(d.Spec.Template.Spec.InitContainers, d.Spec.Template.Spec.Containers) {
			env := containerEnv(rel, c)
			for _, e := range c.Env {
				if e.ValueFrom == nil {
					continue
				}
				switch {
				case e.ValueFrom.SecretKeyRef != nil:
					if v, ok := secretValue(rel, e.ValueFrom.SecretKeyRef.Name, e.ValueFrom.SecretKeyRef.Key); ok {
						env[e.Name] = v
					}
				case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
					env[e.Name] = rel.Namespace
				case e.ValueFrom.FieldRef != nil:
					env[e.Name] = "stand-in"
				}
			}
			out = append(out, ProcessEnv{Object: o, Container: c.Name, Env: env})
		}
	}
	return out
}

// secretValue is key of the Secret name: rendered by the release, or a stand-in when
// the values name it as external. Missing: false (CheckReferences reports it).
func secretValue(rel *Release, name, key string) (string, bool) {
	if o := find(rel, "Secret", name); o != nil {
		s := o.Obj.(*corev1.Secret)
		if v, ok := s.StringData[key]; ok {
			return v, true
		}
		v, ok := s.Data[key]
		return string(v), ok
	}
	if ExternalSecrets(rel.Values)[name] {
		return StandIn(key), true
	}
	return "", false
}

// StandIn is a valid value for a secret variable an external Secret holds, derived
// from its name (so two Secrets holding the same variable agree).
func StandIn(key string) string {
	sum := sha256.Sum256([]byte("chartcheck stand-in " + key))
	switch key {
	case "DATABASE_URL", "DATABASE_READ_URL":
		return "postgres://partnerapi:stand-in@postgres.invalid:5432/partnerapi?sslmode=require"
	case "REDIS_URL":
		return "redis://redis.invalid:6379/0"
	}
	switch registry.System().Secrets[key] {
	case registry.Keyring:
		return "standin:" + base64.StdEncoding.EncodeToString(sum[:])
	case registry.Key:
		return base64.StdEncoding.EncodeToString(sum[:])
	case registry.Token:
		return base64.RawURLEncoding.EncodeToString(sum[:])
	}
	return "stand-in"
}

// LoadedConfigs runs "<process> check-config" (the process's own configuration loader,
// the one it calls at start) in the environment of each serving container of the
// release, with nothing else in it. It returns each process's loaded configuration by
// process name, and one problem per container that would stop at start.
func LoadedConfigs(rel *Release, bin string) (map[string]map[string]any, []string) {
	configs := map[string]map[string]any{}
	var problems []string
	for _, pe := range ReleaseEnvs(rel) {
		name := pe.Object.Labels["app.kubernetes.io/name"]
		if _, ok := registry.System().Get(name); !ok || pe.Container == MigrationContainer {
			continue // not one of our processes (the in-chart Postgres and Redis), or its migration (same environment)
		}
		env := make([]string, 0, len(pe.Env))
		for k, v := range pe.Env {
			env = append(env, k+"="+v)
		}
		slices.Sort(env)
		cmd := exec.Command(filepath.Join(bin, name), "check-config")
		cmd.Env = env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			problems = append(problems, fmt.Sprintf("%s container %q would not start: %s", pe.Object.ID(), pe.Container, strings.TrimSpace(stderr.String())))
			continue
		}
		var cfg map[string]any
		if err := json.Unmarshal(stdout.Bytes(), &cfg); err != nil {
			problems = append(problems, fmt.Sprintf("%s container %q: check-config printed %q: %v", pe.Object.ID(), pe.Container, stdout.String(), err))
			continue
		}
		configs[name] = cfg
	}
	return configs, problems
}

// CheckAgreement: what one process issues or sends, the other accepts. The audience and
// issuer identity puts in access tokens are the ones the gateway expects; menus serve
// the gateway's naming set; every process sending events holds the events service's
// token, and the operator identity's admin token.
func CheckAgreement(rel *Release, configs map[string]map[string]any) []string {
	var problems []string
	same := func(what, a, fa, b, fb string) {
		ca, okA := configs[a]
		cb, okB := configs[b]
		if !okA || !okB {
			return
		}
		if ca[fa] != cb[fb] {
			problems = append(problems, fmt.Sprintf("%s: %s has %v, %s has %v", what, a, ca[fa], b, cb[fb]))
		}
	}
	same("access token audience (identity issues, the gateway expects)", "identity", "TokenAudience", "gateway", "TokenAudience")
	same("access token issuer (identity's PUBLIC_BASE_URL, the gateway's TOKEN_ISSUER)", "identity", "PublicBaseURL", "gateway", "TokenIssuer")
	same("menu naming set", "menus", "MenuNamingSet", "gateway", "MenuNamingSet")

	envs := map[string]map[string]string{}
	for _, pe := range ReleaseEnvs(rel) {
		if pe.Container != MigrationContainer {
			envs[pe.Object.Labels["app.kubernetes.io/name"]] = pe.Env
		}
	}
	for name, env := range envs {
		p, _ := registry.System().Get(name)
		if events, ok := envs["events"]; ok && name != "events" && slices.Contains(p.Secrets, "EVENTS_TOKEN") && env["EVENTS_URL"] != "" && env["EVENTS_TOKEN"] != events["EVENTS_TOKEN"] {
			problems = append(problems, fmt.Sprintf("%s sends events with an EVENTS_TOKEN the events service does not accept", name))
		}
		if identity, ok := envs["identity"]; ok && name == "partneroperator" && env["ADMIN_TOKEN"] != identity["ADMIN_TOKEN"] {
			problems = append(problems, "partneroperator calls identity's admin API with an ADMIN_TOKEN identity does not accept")
		}
	}
	slices.Sort(problems)
	return problems
}
