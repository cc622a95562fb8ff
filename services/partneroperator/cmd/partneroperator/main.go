// Command partneroperator reconciles PartnerClient resources into identity's
// admin API. It runs in the cluster with leader election; metrics and health
// probes listen on the internal address.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"partnerapi.dev/pkg/config"
	partnersv1alpha1 "partnerapi.dev/services/partneroperator/api/v1alpha1"
	"partnerapi.dev/services/partneroperator/internal/controller"
	"partnerapi.dev/services/partneroperator/internal/identityadmin"
)

// Config is everything the operator reads from its environment.
type Config struct {
	// HTTPAddr serves the probes /healthz and /readyz (the operator has no API);
	// InternalHTTPAddr serves /metrics.
	HTTPAddr         string        `env:"HTTP_ADDR, default=127.0.0.1:8084"`
	InternalHTTPAddr string        `env:"INTERNAL_HTTP_ADDR, default=127.0.0.1:9084"`
	IdentityAdminURL string        `env:"IDENTITY_ADMIN_URL, default=http://127.0.0.1:9081"`
	AdminToken       config.Secret `env:"ADMIN_TOKEN"`
	Resync           time.Duration `env:"RESYNC_INTERVAL, default=5m"`
	// SecretOverlap: how long a confidential client's previous secret keeps working
	// after its Secret changed.
	SecretOverlap  time.Duration `env:"SECRET_OVERLAP, default=1h"`
	LeaderElection bool          `env:"LEADER_ELECTION, default=true"`
	// LeaderElectionNamespace is where the Lease lives (the pod's namespace in a cluster).
	LeaderElectionNamespace string `env:"POD_NAMESPACE"`
}

// Validate checks the values; errors name the variable to fix.
func (c *Config) Validate() error {
	var errs []error
	if len(c.AdminToken.Reveal()) < 16 {
		errs = append(errs, errors.New("ADMIN_TOKEN is required (at least 16 characters)"))
	}
	if c.IdentityAdminURL == "" {
		errs = append(errs, errors.New("IDENTITY_ADMIN_URL is required"))
	}
	if c.SecretOverlap < 0 || c.SecretOverlap > 7*24*time.Hour {
		errs = append(errs, errors.New("SECRET_OVERLAP must be between 0 and 168h"))
	}
	if c.Resync <= 0 {
		errs = append(errs, errors.New("RESYNC_INTERVAL must be a positive duration"))
	}
	return errors.Join(errs...)
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == config.CheckCommand {
		if err := config.Check(context.Background(), &Config{}, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "partneroperator:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(ctrl.SetupSignalHandler()); err != nil {
		fmt.Fprintln(os.Stderr, "partneroperator:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	var cfg Config
	if err := config.Load(ctx, &cfg); err != nil {
		return err
	}
	ctrl.SetLogger(zap.New())

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := partnersv1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	restCfg, err := ctrl.GetConfig()
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(restCfg, ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsserver.Options{BindAddress: cfg.InternalHTTPAddr},
		HealthProbeBindAddress:  cfg.HTTPAddr,
		LeaderElection:          cfg.LeaderElection,
		LeaderElectionID:        "partneroperator.partners.partnerapi.dev",
		LeaderElectionNamespace: cfg.LeaderElectionNamespace,
		// A new leader starts at once when the old one stops cleanly.
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		return err
	}
	if err := (&controller.PartnerClientReconciler{
		Client:        mgr.GetClient(),
		Identity:      identityadmin.New(cfg.IdentityAdminURL, cfg.AdminToken.Reveal()),
		Recorder:      mgr.GetEventRecorder("partneroperator"),
		Resync:        cfg.Resync,
		SecretOverlap: cfg.SecretOverlap,
	}).SetupWithManager(mgr); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}
	return mgr.Start(ctx)
}
