package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/dashboard"
	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/sqlite"
)

// axeVersion is the axe-core release the page test is run with (.ci/run
// installs it).
const axeVersion = "4.14.1"

// axePath returns axe-core's axe.min.js: RATCHET_TEST_AXE, else the one
// of a global npm install. Without one the test skips, and fails instead
// under CI=true.
func axePath(t *testing.T) string {
	if p := os.Getenv("RATCHET_TEST_AXE"); p != "" {
		return p
	}
	if out, err := exec.Command("npm", "root", "-g").Output(); err == nil {
		p := filepath.Join(strings.TrimSpace(string(out)), "axe-core", "axe.min.js")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	msg := "no axe-core: npm install -g axe-core@" + axeVersion + " (or set RATCHET_TEST_AXE to its axe.min.js)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// axeViolation is one rule axe-core found broken on a page.
type axeViolation struct {
	ID, Impact, Help string
	Count            int      // how many elements break it
	Nodes            []string // the first few elements' selectors and why
}

// axeRun runs axe-core on the page with options (JSON) and returns its
// violations.
const axeRun = `axe.run(document, %s).then(r => r.violations.map(v => ({
  id: v.id, impact: v.impact || '', help: v.help, count: v.nodes.length,
  nodes: v.nodes.slice(0, 3).map(n => JSON.stringify(n.target) + ' ' + (n.failureSummary || '').split('\n').slice(1, 2).join('').trim())
})))`

// The dashboard's pages in a real headless Chromium, at a desktop width
// (1280 px) and a phone's (390 px), over a store with realistic data: jobs
// with long errors (one of 300 characters without a space), a failed
// workflow of several steps, a batch, a paused schedule, an audit entry
// and dead letters. On every page: the document does not scroll sideways,
// its tables (which scroll inside themselves) are still tables in the
// accessibility tree, axe-core finds no serious or critical accessibility
// violation (and, in the dark theme, no text of too little contrast), and
// no script error or CSP violation shows in the console. Each page's
// full-page screenshots are saved as <page>-<width>.png and
// <page>-<width>-dark.png in the artifact directory (go test -artifacts)
// and in RATCHET_TEST_SCREENSHOT_DIR when that is set.
func TestDashboardPagesInBrowser(t *testing.T) {
	exe := chromiumPath(t)
	axeJS, err := os.ReadFile(axePath(t))
	require.NoError(t, err)
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "ratchet.db"), sqlite.Options{Create: true})
	require.NoError(t, err)
	defer store.Close()

	// Errors as they come: a long sentence, and a 300-character token
	// without a space (a signed URL, a base64 blob) that only wraps
	// anywhere.
	longErr := "charge: the payment gateway refused the card after 3 attempts: " +
		strings.Repeat("upstream said: card_declined (insufficient_funds), retry later; ", 6)
	unbroken := "fetch https://storage.example.com/exports/" + strings.Repeat("a1b2c3d4e5f6", 25)
	charge := ratchet.NewVoidTask("payments.charge", func(ctx context.Context, a struct{ N int }) error {
		return ratchet.DoNotRetry(fmt.Errorf("%d: %s", a.N, longErr))
	})
	ingest := ratchet.NewVoidTask("ingest.fetch-remote-export-file", func(ctx context.Context, a struct{ URL string }) error {
		return ratchet.DoNotRetry(fmt.Errorf("%s", unbroken))
	})
	step := ratchet.NewVoidTask("reports.step", func(ctx context.Context, a struct{ Name string }) error {
		if a.Name == "publish" {
			return ratchet.DoNotRetry(fmt.Errorf("publish: %s", unbroken))
		}
		return nil
	})
	email := ratchet.NewVoidTask("emails.send", func(ctx context.Context, a struct{ To string }) error { return nil })
	eng, err := engine.New(store, engine.Options{
		Client:       ratchet.ClientOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Concurrency:  4,
		PollInterval: 50 * time.Millisecond,
	}, charge, ingest, step, email)
	require.NoError(t, err)
	require.NoError(t, eng.Start(ctx))
	defer func() { _ = eng.Stop(ctx) }()
	c := eng.Client()

	// The dashboard first: its sampler sees the jobs below run (the
	// overview's charts).
	const token = "pages-t0ken"
	h, err := dashboard.New(c, dashboard.Options{
		Prefix:      "/ops",
		Credentials: []dashboard.Credential{{Name: "alice", Token: token, Role: dashboard.RoleOperator}},
		Breakers:    eng.Breakers,
		SampleEvery: 200 * time.Millisecond,
		Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	require.NoError(t, err)
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()
	base := srv.URL + "/ops"

	var finish []uuid.UUID
	ids, err := charge.SubmitMany(ctx, c, []struct{ N int }{{1}, {2}, {3}})
	require.NoError(t, err)
	finish = append(finish, ids...)
	jobID, err := ingest.Submit(ctx, c, struct{ URL string }{"https://storage.example.com/exports/2026-12-07.csv"},
		ratchet.WithTags("ingest", "nightly-export-with-a-rather-long-tag-name"))
	require.NoError(t, err)
	finish = append(finish, jobID)
	wf := ratchet.NewWorkflow()
	fetch := wf.Add(step.With(struct{ Name string }{"fetch"}))
	parse := fetch.Then(step.With(struct{ Name string }{"parse"}))
	check := fetch.Then(step.With(struct{ Name string }{"check"}))
	render := wf.Add(step.With(struct{ Name string }{"render"})).After(parse, check)
	publish := render.Then(step.With(struct{ Name string }{"publish"}))
	publish.Then(step.With(struct{ Name string }{"notify"}))
	wfID, err := c.SubmitWorkflow(ctx, wf)
	require.NoError(t, err)
	for _, s := range []*ratchet.Step{fetch, parse, check, render, publish} {
		finish = append(finish, s.ID())
	}
	var calls []ratchet.Call
	for i := range 6 {
		calls = append(calls, step.With(struct{ Name string }{fmt.Sprintf("batch item %d", i)}))
	}
	batchID, err := c.SubmitBatch(ctx, ratchet.BatchSpec{Name: "december invoices"}, calls)
	require.NoError(t, err)
	_, err = c.PutSchedule(ctx, step.Recurring("nightly-report-for-the-finance-team", "0 3 * * *", struct{ Name string }{"nightly"}))
	require.NoError(t, err)
	require.NoError(t, c.PauseSchedule(ctx, "nightly-report-for-the-finance-team"))
	_, err = c.PutSchedule(ctx, step.Recurring("hourly-digest", "@hourly", struct{ Name string }{"digest"}))
	require.NoError(t, err)
	var mails []struct{ To string }
	for i := range 60 {
		mails = append(mails, struct{ To string }{fmt.Sprintf("customer-%d@example.com", i)})
	}
	ids, err = email.SubmitMany(ctx, c, mails)
	require.NoError(t, err)
	finish = append(finish, ids...)
	for _, id := range finish {
		_, err := c.WaitJob(ctx, id)
		require.NoError(t, err)
	}

	// An action for the audit log (and a paused task for the nodes page).
	req, err := http.NewRequest(http.MethodPost, base+"/tasks/pause", strings.NewReader(url.Values{"task": {"payments.charge"}}.Encode()))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Less(t, resp.StatusCode, 400, "pausing a task through the dashboard")

	bctx := browser(t, exe, 1280, 900, 3*time.Minute)
	problems := watchProblems(t, bctx)

	dirs := []string{t.ArtifactDir()}
	if d := os.Getenv("RATCHET_TEST_SCREENSHOT_DIR"); d != "" {
		dirs = append(dirs, d)
	}
	pages := []struct{ name, path string }{
		{"login", "/login"}, // first: signed in, /login sends to the overview
		{"overview", "/"},
		{"jobs", "/jobs"},
		{"job", "/jobs/" + jobID.String()},
		{"dlq", "/dlq"},
		{"workflows", "/workflows"},
		{"workflow", "/workflows/" + wfID.String()},
		{"batches", "/batches"},
		{"batch", "/batches/" + batchID.String()},
		{"schedules", "/recurring"},
		{"nodes", "/nodes"},
		{"breakers", "/breakers"},
		{"audit", "/audit"},
	}
	signedIn := false
	for _, p := range pages {
		if p.name != "login" && !signedIn {
			require.NoError(t, chromedp.Do(bctx,
				chromedp.Navigate(base+"/login"),
				chromedp.WaitVisible(chromedp.CSS(`input[name="token"]`)),
				chromedp.SendKeys(chromedp.CSS(`input[name="token"]`), token),
				chromedp.Submit(chromedp.CSS(`input[name="token"]`)),
				chromedp.WaitVisible(chromedp.CSS(`.tiles`)),
			), "signing in")
			signedIn = true
		}
		for _, width := range []int64{1280, 390} {
			t.Run(fmt.Sprintf("%s/%d", p.name, width), func(t *testing.T) {
				require.NoError(t, chromedp.Do(bctx,
					chromedp.EmulateViewport(width, 900),
					colorScheme("light"),
					chromedp.Navigate(base+p.path),
					chromedp.WaitReady(chromedp.CSS(`main`)),
				))
				title, err := chromedp.Run(bctx, chromedp.Title())
				require.NoError(t, err)
				require.False(t, strings.HasPrefix(title, "Not Found"), "%s answers 404", p.path)
				problems.take()

				widths, err := chromedp.Run(bctx, chromedp.Evaluate[[2]int](
					`[document.documentElement.scrollWidth, window.innerWidth]`))
				require.NoError(t, err)
				assert.LessOrEqual(t, widths[0], widths[1], "the document scrolls sideways (scrollWidth > innerWidth)")
				if widths[0] > widths[1] {
					wide, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`(() => {
  const w = window.innerWidth, out = [];
  for (const e of document.querySelectorAll('main *, nav *')) {
    const r = e.getBoundingClientRect();
    if (r.right > w + 1 && out.length < 5) out.push(e.tagName.toLowerCase() + (e.className ? '.' + e.className : '') + ' right=' + Math.round(r.right));
  }
  return out;
})()`))
					require.NoError(t, err)
					t.Logf("elements past the right edge: %s", strings.Join(wide, "; "))
				}

				// The tables that scroll inside themselves (display: block)
				// are still tables to a screen reader, headers and all.
				grids, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll("table").length`))
				require.NoError(t, err)
				ax, err := chromedp.Run(bctx, axTables())
				require.NoError(t, err)
				assert.Equal(t, grids, ax[0], "the page's tables in the accessibility tree")
				if grids > 0 {
					assert.Positive(t, ax[1], "column headers in the accessibility tree")
				}

				_, err = chromedp.Run(bctx, chromedp.Evaluate[bool](string(axeJS)+"\n;true"))
				require.NoError(t, err, "loading axe-core into the page")
				axeCheck(t, bctx, `{resultTypes: ['violations']}`)
				screenshot(t, bctx, dirs, fmt.Sprintf("%s-%d.png", p.name, width))

				// The dark theme: the same page, its text's contrast.
				require.NoError(t, chromedp.Do(bctx, colorScheme("dark")))
				axeCheck(t, bctx, `{runOnly: ['color-contrast'], resultTypes: ['violations']}`)
				screenshot(t, bctx, dirs, fmt.Sprintf("%s-%d-dark.png", p.name, width))

				if p.name == "overview" && width == 390 {
					// The navigation is behind its Menu button.
					require.NoError(t, chromedp.Do(bctx,
						chromedp.WaitNotVisible(chromedp.CSS(`#nav-menu`)),
						chromedp.Click(chromedp.CSS(`button.menu-toggle`)),
						chromedp.WaitVisible(chromedp.CSS(`#nav-menu a[href$="/dlq"]`)),
					))
					expanded, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.querySelector("button.menu-toggle").getAttribute("aria-expanded")`))
					require.NoError(t, err)
					assert.Equal(t, "true", expanded)
				}
				seen := problems.take()
				assert.Empty(t, seen, strings.Join(seen, "\n"))
			})
		}
	}
}

// colorScheme makes the page see prefers-color-scheme as scheme.
func colorScheme(scheme string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
		return err
	})
}

// axeCheck runs axe-core (already loaded in the page) with options and
// fails the test on every serious or critical violation; it logs the
// others.
func axeCheck(t *testing.T, ctx context.Context, options string) {
	t.Helper()
	violations, err := chromedp.Run(ctx, chromedp.Evaluate[[]axeViolation](fmt.Sprintf(axeRun, options), chromedp.EvalAwaitPromise))
	require.NoError(t, err, "running axe-core")
	for _, v := range violations {
		msg := fmt.Sprintf("axe %s (%s, %d elements): %s\n    %s", v.ID, v.Impact, v.Count, v.Help, strings.Join(v.Nodes, "\n    "))
		if v.Impact == "serious" || v.Impact == "critical" {
			t.Error(msg)
		} else {
			t.Log(msg)
		}
	}
}

// screenshot saves a full-page screenshot of the page as name in each of
// dirs.
func screenshot(t *testing.T, ctx context.Context, dirs []string, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100: a PNG
	require.NoError(t, err)
	require.NotEmpty(t, png)
	for _, d := range dirs {
		path := filepath.Join(d, name)
		require.NoError(t, os.WriteFile(path, png, 0o644))
		t.Logf("screenshot: %s", path)
	}
}

// axTables counts the nodes of role table and columnheader in the page's
// accessibility tree.
func axTables() chromedp.Action[[2]int] {
	return func(ctx context.Context, t *chromedp.Target) ([2]int, error) {
		tree, err := cdp.Call(ctx, t, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{})
		if err != nil {
			return [2]int{}, err
		}
		var n [2]int
		for _, node := range tree.Nodes {
			if node.Ignored || node.Role == nil {
				continue
			}
			switch strings.Trim(string(node.Role.Value), `"`) {
			case "table":
				n[0]++
			case "columnheader":
				n[1]++
			}
		}
		return n, nil
	}
}
