package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ratchet-go/ratchet/dashboard"
	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/tools/internal/demo"
	"github.com/ratchet-go/ratchet/tools/internal/storeflag"
)

// The environment variables of the dashboard's credentials (also listed in
// the engine's FromEnv table, as another package's).
const (
	envDashboardToken       = "RATCHET_DASHBOARD_TOKEN"
	envDashboardViewerToken = "RATCHET_DASHBOARD_VIEWER_TOKEN"
)

// dashboardCommand is `ratchet dashboard`: the web dashboard over a store,
// with no node (the breakers view says none is attached).
func dashboardCommand(fs *flag.FlagSet) action {
	f := newOpsFlags(fs, false)
	addr := f.fs.String("addr", "127.0.0.1:8080", "address to listen on")
	prefix := f.fs.String("prefix", "", `path to serve under, e.g. "/ops" (default: the root)`)
	token := f.fs.String("token", os.Getenv(envDashboardToken), "the operator's token (default $"+envDashboardToken+"; a random one, printed, when neither is set)")
	viewer := f.fs.String("viewer-token", os.Getenv(envDashboardViewerToken), "a read-only token (default $"+envDashboardViewerToken+")")
	user := f.fs.String("user", "", "an operator signing in with a name and password, NAME:PASSWORD (basic auth or the login form); a PASSWORD starting with $2a$, $2b$ or $2y$ is its bcrypt hash (htpasswd -nbB NAME PASSWORD)")
	insecure := f.fs.Bool("insecure", false, "serve without authentication, everyone an operator (a loopback address only)")
	return opsCommand("dashboard", f, func(ctx context.Context, st *storeflag.Opened, c *ratchet.Client, _ []string, stdout, _ io.Writer) error {
		o := dashboard.Options{Prefix: strings.TrimSuffix(*prefix, "/"), Insecure: *insecure}
		generated := false
		if !*insecure {
			if *token == "" && *user == "" {
				*token, generated = rand.Text(), true
			}
			if *token != "" {
				o.Credentials = append(o.Credentials, dashboard.Credential{Name: "operator", Token: *token, Role: dashboard.RoleOperator})
			}
			if *viewer != "" {
				o.Credentials = append(o.Credentials, dashboard.Credential{Name: "viewer", Token: *viewer, Role: dashboard.RoleViewer})
			}
			if *user != "" {
				name, pass, ok := strings.Cut(*user, ":")
				if !ok || name == "" || pass == "" {
					return usageError("--user wants NAME:PASSWORD")
				}
				cr := dashboard.Credential{Name: name, Password: pass, Role: dashboard.RoleOperator}
				if isBcrypt(pass) { // the hash, not the password: stored nowhere in clear
					cr.Password, cr.PasswordHash = "", pass
				}
				o.Credentials = append(o.Credentials, cr)
			}
		} else if host, _, err := net.SplitHostPort(*addr); err != nil || !isLoopback(host) {
			return usageError("--insecure serves only on a loopback address (127.0.0.1:PORT or [::1]:PORT)")
		}
		h, err := dashboard.New(c, o)
		if err != nil {
			return err
		}
		defer func() { _ = h.Close() }()
		return serve(ctx, h, *addr, func(base string) {
			fmt.Fprintf(stdout, "ratchet dashboard: %s at %s/\n", st.Desc, base+o.Prefix)
			if generated {
				fmt.Fprintf(stdout, "sign in with the token %s (or set $%s)\n", *token, envDashboardToken)
			}
		})
	})
}

// isBcrypt reports whether a --user password is a bcrypt hash.
func isBcrypt(s string) bool {
	return strings.HasPrefix(s, "$2a$") || strings.HasPrefix(s, "$2b$") || strings.HasPrefix(s, "$2y$")
}

// devCommand is `ratchet dev`: a node running the demo's tasks and the
// dashboard, on an embedded SQLite database in --data, in one command.
func devCommand(fs *flag.FlagSet) action {
	data := fs.String("data", "ratchet-dev", "the data directory (created when missing): the SQLite database is DIR/ratchet.db")
	addr := fs.String("addr", "127.0.0.1:8080", "address the dashboard listens on")
	token := fs.String("token", os.Getenv(envDashboardToken), "the dashboard's token (default $"+envDashboardToken+", else a random one)")
	jobs := fs.Int("demo", 200, "jobs of the demo's mix (and the demo's workflow) to submit when the database has no jobs; 0 for none")
	concurrency := fs.Int("concurrency", 10, "jobs the node runs at once")
	verbose := fs.Bool("v", false, "log the node's events to stderr")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		fail := func(err error) int {
			fmt.Fprintf(stderr, "ratchet dev: %v\n", err)
			return 1
		}
		if *token == "" {
			*token = rand.Text()
		}
		if err := os.MkdirAll(*data, 0o755); err != nil {
			return fail(fmt.Errorf("the data directory: %w", err))
		}
		opened, err := storeflag.Open(ctx, "sqlite", filepath.Join(*data, "ratchet.db"), "", true)
		if err != nil {
			return fail(err)
		}
		defer func() { _ = opened.Close() }()
		logger := slog.New(slog.NewTextHandler(io.Discard, nil))
		if *verbose {
			logger = slog.New(slog.NewTextHandler(stderr, nil))
		}
		eng, err := engine.New(opened.Store, engine.Options{
			Client:          ratchet.ClientOptions{Logger: logger, MaskPayloads: true},
			Concurrency:     *concurrency,
			PollInterval:    200 * time.Millisecond,
			ShutdownTimeout: 5 * time.Second,
			Schedules:       demo.Schedules(),
		}, demo.Tasks()...)
		if err != nil {
			return fail(err)
		}
		// Whether the store has jobs is read before the node starts: once it
		// runs, the demo's recurring schedule submits a job every second, and
		// a store that held only that job would never get the demo's.
		seed := false
		if *jobs > 0 {
			page, err := eng.Client().ListJobs(ctx, ratchet.ListOptions{Limit: 1})
			if err != nil {
				return fail(fmt.Errorf("read the jobs: %w", err))
			}
			seed = len(page.Jobs) == 0
		}
		if err := eng.Start(ctx); err != nil {
			return fail(err)
		}
		defer func() { _ = eng.Stop(context.WithoutCancel(ctx)) }()
		h, err := dashboard.New(eng.Client(), dashboard.Options{
			Credentials: []dashboard.Credential{{Name: "dev", Token: *token, Role: dashboard.RoleOperator}},
			Breakers:    eng.Breakers,
		})
		if err != nil {
			return fail(err)
		}
		defer func() { _ = h.Close() }()
		err = serve(ctx, h, *addr, func(base string) {
			fmt.Fprintf(stdout, "ratchet dev: a node and the dashboard on %s\n", opened.Desc)
			fmt.Fprintf(stdout, "dashboard: %s/login?token=%s\n", base, *token)
			if seed {
				go seedDemo(ctx, eng.Client(), *jobs, stdout, stderr)
			}
		})
		if err != nil {
			return fail(err)
		}
		return 0
	}
}

// seedStarting, when not nil, runs as seedDemo starts: a test holds the
// seeding back with it until the node has run.
var seedStarting func(ctx context.Context, c *ratchet.Client)

// seedDemo submits the demo's jobs (runDev calls it when the store had
// none), so that a first look at the dashboard has something to show.
func seedDemo(ctx context.Context, c *ratchet.Client, n int, stdout, stderr io.Writer) {
	if seedStarting != nil {
		seedStarting(ctx, c)
	}
	if _, err := demo.Seed(ctx, c, n, uint64(time.Now().UnixNano())); err != nil {
		if ctx.Err() == nil {
			fmt.Fprintf(stderr, "ratchet dev: submit the demo's jobs: %v\n", err)
		}
		return
	}
	fmt.Fprintf(stdout, "submitted %d demo jobs and the demo's workflow\n", n)
}

// serve serves h on addr until ctx is done, then shuts the server down,
// letting requests in flight finish for up to 5 s. listening is called
// with the base URL ("http://127.0.0.1:8080") once the listener is open,
// so that a port of 0 prints the one chosen.
func serve(ctx context.Context, h http.Handler, addr string, listening func(base string)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	listening("http://" + ln.Addr().String())
	select {
	case err := <-done:
		return fmt.Errorf("serve on %s: %w", addr, err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// isLoopback reports whether host is a loopback address or localhost.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
