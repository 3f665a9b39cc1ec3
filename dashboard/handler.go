package dashboard

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// DefaultSessionTTL is how long a session lasts when Options.SessionTTL is
// zero.
const DefaultSessionTTL = 12 * time.Hour

// DefaultSampleEvery is how often the overview samples the job counts when
// Options.SampleEvery is zero.
const DefaultSampleEvery = 10 * time.Second

// MinSessionKey is the least length of Options.SessionKey, in bytes.
const MinSessionKey = 32

// Handler is the dashboard: an http.Handler mounted at Options.Prefix. New
// makes one; Close stops its stats sampler and its running bulk
// operations.
type Handler struct {
	c      *ratchet.Client
	o      Options
	prefix string
	log    *slog.Logger
	mux    *http.ServeMux
	tmpl   *templates

	sampler *sampler
	ops     *operations
	revoked *revocations
	// throttle counts failed sign-ins; crossOrigin guards the actions of
	// Authenticate's users; dummyHash, when some credential has a
	// PasswordHash, is what a name without one is compared with.
	throttle    *throttle
	crossOrigin *http.CrossOriginProtection
	dummyHash   []byte

	ctx       context.Context // ends at Close: the background work's context
	cancel    context.CancelFunc
	mu        sync.Mutex // guards closed and wg.Add against Close
	closed    bool
	wg        sync.WaitGroup
	closeOnce sync.Once
}

// goBackground runs fn in a goroutine that Close waits for; false when
// the handler is closed.
func (h *Handler) goBackground(fn func()) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		fn()
	}()
	return true
}

// New returns the dashboard over c. It refuses Options with no Credentials
// unless Authenticate or Insecure is set (and both of these), credentials
// that share a token or a name, a credential with neither a token nor a
// password (or a password without a name, or both a Password and a
// PasswordHash), a malformed PasswordHash, and a SessionKey shorter than
// MinSessionKey bytes; each error names the problem. It starts the stats sampler, which takes its first
// sample at once: call Close to stop it.
func New(c *ratchet.Client, o Options) (*Handler, error) {
	if c == nil {
		return nil, errors.New("dashboard: nil client")
	}
	if err := validate(&o); err != nil {
		return nil, err
	}
	tm, err := parseTemplates(o.Prefix)
	if err != nil {
		return nil, fmt.Errorf("dashboard: templates: %w", err)
	}
	h := &Handler{c: c, o: o, prefix: o.Prefix, log: o.Logger, tmpl: tm, revoked: newRevocations(),
		throttle: newThrottle(), crossOrigin: http.NewCrossOriginProtection()}
	if h.dummyHash, err = dummyHash(o.Credentials); err != nil {
		return nil, err
	}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	h.ops = newOperations()
	h.sampler = newSampler(h.stats, o.Now, o.SampleEvery, sampleRing).withHistory(spi.CapabilitiesOf(c.Store()).Samples, h.log)
	h.routes()
	h.goBackground(func() { h.sampler.run(h.ctx) })
	return h, nil
}

// validate checks o and fills its defaults.
func validate(o *Options) error {
	if len(o.Credentials) == 0 && !o.Insecure && o.Authenticate == nil {
		return errors.New("dashboard: no Credentials: authentication is on by default; give at least one credential or an Authenticate hook, or set Insecure for a dashboard on a developer's loopback only")
	}
	if o.Insecure && o.Authenticate != nil {
		return errors.New("dashboard: both Insecure and Authenticate are set: Insecure lets everyone in, so drop it to sign in through Authenticate")
	}
	o.Prefix = strings.TrimSuffix(o.Prefix, "/")
	if o.Prefix != "" && !strings.HasPrefix(o.Prefix, "/") {
		return fmt.Errorf("dashboard: Prefix %q must start with a slash", o.Prefix)
	}
	tokens, names := map[string]bool{}, map[string]bool{}
	for i, cr := range o.Credentials {
		switch {
		case cr.Token == "" && cr.Password == "" && cr.PasswordHash == "":
			return fmt.Errorf("dashboard: credential %d (%q) has neither a token nor a password", i+1, cr.Name)
		case cr.Password != "" && cr.PasswordHash != "":
			return fmt.Errorf("dashboard: credential %q has both a Password and a PasswordHash: give one", cr.Name)
		case cr.Name == "":
			return fmt.Errorf("dashboard: credential %d has no name (the actor the audit log records)", i+1)
		case names[cr.Name]:
			return fmt.Errorf("dashboard: two credentials are named %q", cr.Name)
		case cr.Token != "" && tokens[cr.Token]:
			return fmt.Errorf("dashboard: credential %q has the same token as another", cr.Name)
		case cr.Role != 0 && cr.Role != RoleViewer && cr.Role != RoleOperator:
			return fmt.Errorf("dashboard: credential %q has an unknown role %d", cr.Name, int(cr.Role))
		}
		if err := checkHash(cr.PasswordHash); err != nil {
			return fmt.Errorf("dashboard: credential %q has a malformed PasswordHash: %w; give a bcrypt hash (\"$2a$...\", \"$2b$...\" or \"$2y$...\", e.g. from htpasswd -nbB or bcrypt.GenerateFromPassword)", cr.Name, err)
		}
		names[cr.Name] = true
		if cr.Token != "" {
			tokens[cr.Token] = true
		}
		if cr.Role == 0 {
			o.Credentials[i].Role = RoleViewer
		}
	}
	o.Credentials = append([]Credential(nil), o.Credentials...)
	switch {
	case o.SessionKey == nil:
		o.SessionKey = make([]byte, MinSessionKey)
		if _, err := rand.Read(o.SessionKey); err != nil {
			return fmt.Errorf("dashboard: a random session key: %w", err)
		}
	case len(o.SessionKey) < MinSessionKey:
		return fmt.Errorf("dashboard: SessionKey is %d bytes, fewer than %d", len(o.SessionKey), MinSessionKey)
	}
	if o.SessionTTL < 0 || o.SampleEvery < 0 || o.LiveWithin < 0 {
		return errors.New("dashboard: SessionTTL, SampleEvery and LiveWithin must not be negative")
	}
	if o.SessionTTL == 0 {
		o.SessionTTL = DefaultSessionTTL
	}
	if o.SampleEvery == 0 {
		o.SampleEvery = DefaultSampleEvery
	}
	if o.LiveWithin == 0 {
		o.LiveWithin = DefaultLiveWithin
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return nil
}

// Close stops the stats sampler and cancels the running bulk operations,
// and waits for them. It is idempotent.
func (h *Handler) Close() error {
	h.closeOnce.Do(func() {
		h.mu.Lock()
		h.closed = true
		h.mu.Unlock()
		h.cancel()
		h.wg.Wait()
	})
	return nil
}

// now is the dashboard's clock, in UTC.
func (h *Handler) now() time.Time { return h.o.Now().UTC() }

// ServeHTTP serves the dashboard: it strips Options.Prefix, sets the
// security headers, authenticates the request and routes it.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setSecurityHeaders(w.Header())
	path := r.URL.Path
	if h.prefix != "" {
		rest, ok := strings.CutPrefix(path, h.prefix)
		if !ok || (rest != "" && !strings.HasPrefix(rest, "/")) {
			http.NotFound(w, r)
			return
		}
		if rest == "" {
			http.Redirect(w, r, h.prefix+"/", http.StatusMovedPermanently)
			return
		}
		path = rest
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path = path
	r2.URL.RawPath = ""
	h.mux.ServeHTTP(w, r2)
}

// setSecurityHeaders sets the headers every answer carries.
func setSecurityHeaders(hd http.Header) {
	hd.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "same-origin")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Cache-Control", "no-store")
}
