package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/dashboard"
	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/sqlite"
)

// The overview is live: jobs finish while the page is open, and its
// SUCCEEDED count shows them within 5 seconds, without a reload (the page
// refreshes its live region every 2 seconds by default).
func TestDashboardOverviewIsLiveInBrowser(t *testing.T) {
	exe := chromiumPath(t)
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "ratchet.db"), sqlite.Options{Create: true})
	require.NoError(t, err)
	defer store.Close()

	const n = 6
	started, release := make(chan struct{}, n), make(chan struct{})
	work := ratchet.NewVoidTask("reports.build", func(ctx context.Context, a struct{ N int }) error {
		started <- struct{}{}
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	eng, err := engine.New(store, engine.Options{
		Client:       ratchet.ClientOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Concurrency:  8,
		PollInterval: 50 * time.Millisecond,
	}, work)
	require.NoError(t, err)
	events, unsubscribe := eng.Subscribe(1000)
	defer unsubscribe()
	require.NoError(t, eng.Start(ctx))
	defer func() { _ = eng.Stop(ctx) }()
	var args []struct{ N int }
	for i := range n {
		args = append(args, struct{ N int }{i})
	}
	_, err = work.SubmitMany(ctx, eng.Client(), args)
	require.NoError(t, err)
	for range n {
		<-started
	}

	const token = "live-t0ken"
	h, err := dashboard.New(eng.Client(), dashboard.Options{
		Credentials: []dashboard.Credential{{Name: "carol", Token: token, Role: dashboard.RoleViewer}},
	})
	require.NoError(t, err)
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()

	bctx := browser(t, exe, 1280, 900, 2*time.Minute)
	count := func(status string) int {
		t.Helper()
		s, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS(`[data-count="`+status+`"]`)))
		require.NoError(t, err)
		v, err := strconv.Atoi(s)
		require.NoError(t, err, "the %s tile reads %q", status, s)
		return v
	}
	require.NoError(t, chromedp.Do(bctx,
		chromedp.Navigate(srv.URL+"/login?token="+token),
		chromedp.WaitVisible(chromedp.CSS(`[data-count="SUCCEEDED"]`)),
	))
	require.Equal(t, n, count("RUNNING"))
	require.Equal(t, 0, count("SUCCEEDED"))

	close(release)
	awaitEvents(t, events, engine.EventSucceeded, n)
	finished := time.Now()
	_, err = chromedp.Run(bctx, chromedp.Poll[bool](fmt.Sprintf(`document.querySelector('[data-count="SUCCEEDED"]').textContent === "%d"`, n),
		chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(5*time.Second)))
	require.NoError(t, err, "the overview's SUCCEEDED count did not reach %d within 5 s of the jobs finishing", n)
	t.Logf("the overview showed the %d finished jobs %v after they finished", n, time.Since(finished).Round(10*time.Millisecond))
	require.Equal(t, 0, count("RUNNING"))
}
