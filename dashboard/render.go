package dashboard

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ratchet-go/ratchet/internal/jobjson"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// templates are the pages, each a clone of the layout with its content.
type templates struct {
	pages map[string]*template.Template
}

// parseTemplates parses the layout and every page; links start with
// prefix.
func parseTemplates(prefix string) (*templates, error) {
	funcs := template.FuncMap{
		"link": func(parts ...any) string {
			var b strings.Builder
			b.WriteString(prefix)
			for _, p := range parts {
				fmt.Fprint(&b, p)
			}
			return b.String()
		},
		"stamp": stamp,
		"when":  when,
		"since": since,
		"at": func(t time.Time) template.HTML { // a time shown absolute, in the browser's zone (a log line's)
			return template.HTML(strings.Replace(string(when(t)), "<time ", "<time data-abs ", 1))
		},
		"short":      short,
		"waited":     waited,
		"ran":        ran,
		"scheduled":  func(j *spi.Job, now time.Time) bool { return j.Status == spi.StatusPending && j.ScheduledAt.After(now) },
		"pretty":     pretty,
		"firstLine":  firstLine,
		"moreLines":  moreLines,
		"took":       took,
		"clip":       clip,
		"dur":        dur,
		"chip":       func(s any) string { return "st-" + fmt.Sprint(s) },
		"lower":      strings.ToLower,
		"q":          url.QueryEscape,
		"join":       strings.Join,
		"add":        func(a, b int) int { return a + b },
		"status":     func() []spi.Status { return statuses },
		"prios":      func() []string { return priorities },
		"runTimeout": jobjson.RunTimeout,
		"signalWait": jobjson.Signal,
		"maxSnoozes": spi.MaxSnoozes,
		"startBy": func(j *spi.Job) string {
			if by, ok := spi.StartBy(j); ok {
				return stamp(by)
			}
			return ""
		},
	}
	base, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html")
	if err != nil {
		return nil, err
	}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	t := &templates{pages: map[string]*template.Template{}}
	for _, n := range names {
		name := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if name == "layout" {
			continue
		}
		c, err := template.Must(base.Clone()).ParseFS(templateFS, n)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		t.pages[name] = c
	}
	return t, nil
}

// page is what the layout renders around a view's data.
type page struct {
	Title   string
	Nav     string // the nav entry to highlight
	User    *principal
	CSRF    string
	CanAct  bool
	Banner  string // the store's error: "store unreachable: ..."
	Notice  string
	Error   string // a problem with the request (a filter that does not parse)
	Refresh int    // seconds; a meta refresh while an operation runs
	// Live marks a page that refreshes its live regions by itself
	// (app.js fetches the page again and swaps its elements marked
	// data-live), with the interval menu and the pause toggle.
	Live bool
	Now  time.Time
	Data any
}

// render renders view name with status.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, name, title string, data any) {
	h.renderPage(w, r, status, name, &page{Title: title, Data: data})
}

// renderPage renders view name with p, filling its user fields.
func (h *Handler) renderPage(w http.ResponseWriter, r *http.Request, status int, name string, p *page) {
	t := h.tmpl.pages[name]
	if t == nil {
		h.serverError(w, r, fmt.Errorf("no template %q", name))
		return
	}
	if u := principalOf(r); u != nil {
		p.User, p.CSRF, p.CanAct = u, h.csrfToken(u), u.canAct()
	}
	if p.Notice == "" {
		p.Notice = h.noticeOf(r)
	}
	if p.Nav == "" {
		p.Nav = name
	}
	p.Now = h.now()
	var b strings.Builder
	if err := t.ExecuteTemplate(&b, "layout", p); err != nil {
		h.log.Error("dashboard: render", "view", name, "error", err)
		http.Error(w, "dashboard: render "+name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
}

// errorPage renders the frame with a message and status.
func (h *Handler) errorPage(w http.ResponseWriter, r *http.Request, status int, msg string) {
	h.renderPage(w, r, status, "error", &page{Title: http.StatusText(status), Error: msg, Data: status})
}

// serverError answers 500 for a fault of the dashboard itself.
func (h *Handler) serverError(w http.ResponseWriter, r *http.Request, err error) {
	h.log.Error("dashboard: internal error", "path", r.URL.Path, "error", err)
	if isAPI(r) {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
		return
	}
	h.errorPage(w, r, http.StatusInternalServerError, err.Error())
}

// statusOf maps a store or client error to an HTTP status: 404 for an
// unknown id, 400 for an invalid argument, 501 for a capability the store
// lacks, else 503 (the store is unreachable or failing).
func statusOf(err error) int {
	switch {
	case errors.Is(err, ratchet.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, ratchet.ErrInvalidArgument):
		return http.StatusBadRequest
	case errors.Is(err, ratchet.ErrInvalidState):
		return http.StatusConflict
	case errors.Is(err, ratchet.ErrUnsupported) || errors.Is(err, errors.ErrUnsupported):
		return http.StatusNotImplemented
	}
	return http.StatusServiceUnavailable
}

// storeFailed renders view name's frame with p and the store's error as a
// banner (503), or, for an unknown id or a bad argument, the error page.
func (h *Handler) storeFailed(w http.ResponseWriter, r *http.Request, name string, p *page, err error) {
	st := statusOf(err)
	if st != http.StatusServiceUnavailable {
		h.errorPage(w, r, st, err.Error())
		return
	}
	h.log.Warn("dashboard: store call failed", "path", r.URL.Path, "error", err)
	p.Banner = "store unreachable: " + err.Error()
	h.renderPage(w, r, st, name, p)
}

// writeJSON answers v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// apiError answers err as JSON with the status statusOf gives it.
func (h *Handler) apiError(w http.ResponseWriter, r *http.Request, status int, err error) {
	if status == 0 {
		status = statusOf(err)
	}
	if status >= 500 {
		h.log.Warn("dashboard: store call failed", "path", r.URL.Path, "error", err)
	}
	msg := err.Error()
	if status == http.StatusServiceUnavailable {
		msg = "store unreachable: " + msg
	}
	writeJSON(w, status, map[string]string{"error": msg})
}

// stamp formats a time for a table, "-" for none.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

// when is a time for a page: a <time> element whose text is the UTC
// stamp (what a page without script shows) and whose datetime app.js
// rewrites into the browser's zone, relative to now, with the absolute
// local and UTC times on hover; "-" for none.
func when(t time.Time) template.HTML {
	if t.IsZero() {
		return "-"
	}
	u := t.UTC()
	return template.HTML(`<time datetime="` + u.Format(time.RFC3339Nano) + `" title="` + stamp(u) + `">` + stamp(u) + `</time>`)
}

// since is the ticking time elapsed from t: a span that app.js updates
// every second, its text the elapsed time at render (now - t).
func since(t, now time.Time) template.HTML {
	if t.IsZero() {
		return "-"
	}
	return template.HTML(`<span class="ticking" data-since="` + t.UTC().Format(time.RFC3339Nano) + `">` + template.HTMLEscapeString(dur(now.Sub(t))) + `</span>`)
}

// waited is how long job j waited for its run: from due to its last
// claim; for a PENDING job due already, the wait so far, ticking; "-"
// for a job scheduled later or never claimed.
func waited(j *spi.Job, now time.Time) template.HTML {
	switch {
	case j.Status == spi.StatusPending && !j.ScheduledAt.After(now):
		return since(j.ScheduledAt, now)
	case j.ClaimedAt.IsZero() || j.ScheduledAt.IsZero() || j.ClaimedAt.Before(j.ScheduledAt):
		return "-"
	}
	return template.HTML(template.HTMLEscapeString(dur(j.ClaimedAt.Sub(j.ScheduledAt))))
}

// ran is how long job j's last run took: ticking while it runs; "-" for
// a job that has not run.
func ran(j *spi.Job, now time.Time) template.HTML {
	switch {
	case j.Status == spi.StatusRunning:
		return since(j.ClaimedAt, now)
	case j.ClaimedAt.IsZero() || j.FinishedAt.IsZero() || j.FinishedAt.Before(j.ClaimedAt):
		return "-"
	}
	return template.HTML(template.HTMLEscapeString(took(j.ClaimedAt, j.FinishedAt)))
}

// short is the last 8 hexadecimal digits of an id, for a table (the full
// id is in the link's title and the copy button): a job id's first digits
// are its creation time, shared by the jobs of one batch, its last ones
// random.
func short(id fmt.Stringer) string {
	s := id.String()
	if len(s) > 8 {
		return s[len(s)-8:]
	}
	return s
}

// pretty indents a JSON document for reading; anything else (a masked
// or encrypted payload, text) is returned as it is.
func pretty(s string) string {
	var b bytes.Buffer
	if json.Indent(&b, []byte(s), "", "  ") != nil {
		return s
	}
	return b.String()
}

// firstLine is an error's first line (the message of an error with a
// stack trace below it).
func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// moreLines is what follows an error's first line (a panic's stack
// trace), empty for a one-line error.
func moreLines(s string) string {
	_, rest, _ := strings.Cut(s, "\n")
	return strings.TrimRight(rest, "\n")
}

// took is how long a run that started at start took until end, for
// people; "-" for a run still going.
func took(start, end time.Time) string {
	if start.IsZero() || end.IsZero() {
		return "-"
	}
	return dur(end.Sub(start))
}

// dur formats a duration for people.
func dur(d time.Duration) string {
	switch {
	case d < 0:
		return "-" + dur(-d)
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Hour:
		return d.Round(time.Second).String()
	case d < 48*time.Hour:
		return d.Round(time.Minute).String()
	}
	return fmt.Sprintf("%dd%dh", int(d.Hours())/24, int(d.Hours())%24)
}

// clip shortens s to n runes for a table cell.
func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
