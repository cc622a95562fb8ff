package chartcheck

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestChecksCatchBrokenCharts breaks a chart in memory, one way per case, and expects
// the checks to say so: a check that never fails protects nothing.
func TestChecksCatchBrokenCharts(t *testing.T) {
	root := repoRoot(t)
	cases := []struct {
		name          string
		chart         string // chart to break; empty: identity
		file          string // template to edit, of the chart or of the library chart it includes
		old, new      string
		values        map[string]any
		wantRenderErr string
		check         func(*Release) []string
		wantProblem   string
	}{
		{
			name: "unknown field in a manifest",
			file: "templates/_service.tpl", old: "  type: {{ .Values.service.type }}", new: "  typ: {{ .Values.service.type }}",
			wantRenderErr: `unknown field "spec.typ"`,
		},
		{
			name:          "value not in the schema",
			values:        map[string]any{"replicas": 3},
			wantRenderErr: "additional properties 'replicas' not allowed",
		},
		{
			name:          "external secret not named",
			values:        map[string]any{"secret": map[string]any{"create": false}},
			wantRenderErr: "existingSecret",
		},
		{
			name: "writable root filesystem",
			file: "templates/_helpers.tpl", old: "readOnlyRootFilesystem: true", new: "readOnlyRootFilesystem: false",
			check: CheckWorkloads, wantProblem: "readOnlyRootFilesystem is not true",
		},
		{
			name: "no readiness probe",
			file: "templates/_deployment.tpl", old: "readinessProbe:", new: "startupProbe:",
			check: CheckWorkloads, wantProblem: "no readinessProbe",
		},
		{
			name: "service selects nothing",
			file: "templates/_service.tpl", old: `{{- include "common.selectorLabels" . | nindent 4 }}`, new: "app: identity",
			check: func(r *Release) []string { return CheckSelectors(r, false) }, wantProblem: "matches 0 workloads",
		},
		{
			name: "secret referenced but never rendered",
			file: "templates/_secret.tpl", old: "{{- if .Values.secret.create }}", new: "{{- if false }}",
			check: CheckReferences, wantProblem: `uses Secret "rpa-identity", which is neither rendered nor listed as external`,
		},
		{
			name: "missing standard label",
			file: "templates/_helpers.tpl", old: "app.kubernetes.io/part-of: {{ .Values.global.partOf }}\n", new: "",
			check: CheckLabels, wantProblem: "label app.kubernetes.io/part-of is missing",
		},
		{
			name: "public Service exposes the internal port",
			file: "templates/_service.tpl", old: "      targetPort: http\n", new: "      targetPort: internal\n",
			check: CheckInternalListener, wantProblem: "exposes the internal port (metrics, admin API) on a public Service",
		},
		{
			name: "internal Service also exposes the public port",
			file: "templates/_service-internal.tpl", old: "      targetPort: internal\n", new: "      targetPort: internal\n    - name: http\n      port: 8080\n      targetPort: http\n",
			check: CheckInternalListener, wantProblem: "an internal Service exposes nothing else",
		},
		{
			name: "admin API served on the public port",
			file: "templates/_helpers.tpl", old: `INTERNAL_HTTP_ADDR: {{ printf ":%v" .Values.internal.containerPort | quote }}`, new: `INTERNAL_HTTP_ADDR: {{ printf ":%v" .Values.containerPort | quote }}`,
			check: CheckInternalListener, wantProblem: `INTERNAL_HTTP_ADDR=":8080", want it to listen on container port 9090`,
		},
		{
			name: "Prometheus pointed at the public port",
			file: "templates/_deployment.tpl", old: "prometheus.io/port: {{ .Values.internal.containerPort | quote }}", new: "prometheus.io/port: {{ .Values.containerPort | quote }}",
			check: CheckInternalListener, wantProblem: "prometheus.io/port is 8080",
		},
		{
			name: "NetworkPolicy admits the internal port from every namespace",
			file: "templates/_networkpolicy.tpl", old: "        - podSelector: {}\n", new: "        - namespaceSelector: {}\n",
			check: CheckInternalListener, wantProblem: "admits the internal port from every namespace",
		},
		{
			name: "NetworkPolicy admits every port from anywhere",
			file: "templates/_networkpolicy.tpl", old: "  ingress:\n", new: "  ingress:\n    - {}\n",
			check: CheckInternalListener, wantProblem: "admits the internal port from anywhere",
		},
		{
			name:  "Ingress targets the gateway's internal Service",
			chart: "gateway",
			file:  "templates/ingress.yaml", old: `name: {{ include "common.fullname" $ }}`, new: `name: {{ include "common.fullname" $ }}-internal`,
			values: map[string]any{"ingress": map[string]any{"enabled": true, "hosts": []any{map[string]any{"host": "api.example.com", "paths": []any{map[string]any{"path": "/"}}}}}},
			check:  CheckInternalListener, wantProblem: "targets the internal Service rpa-gateway-internal",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := tc.chart
			if name == "" {
				name = "identity"
			}
			c, err := LoadChart(filepath.Join(root, "charts", name))
			if err != nil {
				t.Fatal(err)
			}
			if tc.file != "" {
				var edited bool
				templates := c.Templates
				for _, d := range c.Dependencies() {
					templates = append(templates, d.Templates...)
				}
				for _, f := range templates {
					if f.Name == tc.file {
						if !strings.Contains(string(f.Data), tc.old) {
							t.Fatalf("%s no longer contains %q: update this case", tc.file, tc.old)
						}
						f.Data = []byte(strings.Replace(string(f.Data), tc.old, tc.new, 1))
						edited = true
					}
				}
				if !edited {
					t.Fatalf("%s chart has no %s", name, tc.file)
				}
			}
			vals := tc.values
			if vals == nil {
				vals = map[string]any{}
			}
			rel, err := Render(c, vals, "rpa", "partner-api")
			if tc.wantRenderErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantRenderErr) {
					t.Fatalf("render error = %v, want one containing %q", err, tc.wantRenderErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			problems := tc.check(rel)
			for _, p := range problems {
				if strings.Contains(p, tc.wantProblem) {
					return
				}
			}
			t.Fatalf("no problem containing %q; got:\n  %s", tc.wantProblem, strings.Join(problems, "\n  "))
		})
	}
}
