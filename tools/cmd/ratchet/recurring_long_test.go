package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	drv "github.com/go-sql-driver/mysql"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	"github.com/ratchet-go/ratchet/internal/dbtest"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/tools/internal/storeflag"
)

// The multi-process acceptance run of recurring schedules, behind
// RATCHET_TEST_LONG=1 (about 35 s per database): three engine processes
// share one database with an @every 1s schedule for 30 s; one is killed
// (SIGKILL) half-way; every slot from the first to the last must have
// exactly one job, none missed.
//
//	RATCHET_TEST_LONG=1 go test -run TestRecurringAcrossProcesses -v ./tools/cmd/ratchet

// The child process: a node over the store the parent names.
const (
	envNodeStore  = "RATCHET_TEST_NODE_STORE"
	envNodeSchema = "RATCHET_TEST_NODE_SCHEMA"
	envNodeDB     = "RATCHET_TEST_NODE_DB"
	envNodeID     = "RATCHET_TEST_NODE_ID"
	longSchedule  = "long-every-second"
)

var longTick = ratchet.NewVoidTask("long.tick", func(context.Context, int) error { return nil })

func TestMain(m *testing.M) {
	if spec := os.Getenv(envNodeStore); spec != "" {
		os.Exit(recurringNode(spec))
	}
	if spec := os.Getenv(envCancelStore); spec != "" {
		os.Exit(cancelNode(spec))
	}
	if spec := os.Getenv(envStreamStore); spec != "" {
		os.Exit(streamNode(spec))
	}
	if args := os.Getenv(envRatchetArgs); args != "" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := run(ctx, strings.Split(args, "\x1f"), os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// recurringNode runs one engine with the schedule until SIGTERM.
func recurringNode(spec string) int {
	return runNode(spec, true, engine.Options{
		HeartbeatInterval:  time.Second,
		OrphanGrace:        5 * time.Second,
		OrphanScanInterval: 2 * time.Second,
		Schedules:          []ratchet.Recurring{longTick.Recurring(longSchedule, "@every 1s", 1)},
	}, longTick)
}

// runNode is a child process's node over the store the parent names
// (spec, and the database and schema of the environment), with its id
// from the environment and no log, until SIGTERM; then it stops within
// 5 s. It returns the process's exit status.
func runNode(spec string, create bool, o engine.Options, tasks ...ratchet.Definition) int {
	ctx := context.Background()
	st, err := storeflag.Open(ctx, spec, os.Getenv(envNodeDB), os.Getenv(envNodeSchema), create)
	if err != nil {
		fmt.Fprintln(os.Stderr, "node:", err)
		return 1
	}
	defer st.Close()
	o.Client.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	o.NodeID = os.Getenv(envNodeID)
	eng, err := engine.New(st.Store, o, tasks...)
	if err == nil {
		err = eng.Start(ctx)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "node:", err)
		return 1
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM)
	<-stop
	stopCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := eng.Stop(stopCtx); err != nil {
		fmt.Fprintln(os.Stderr, "node: stop:", err)
		return 1
	}
	return 0
}

func TestRecurringAcrossProcesses(t *testing.T) {
	if os.Getenv("RATCHET_TEST_LONG") != "1" {
		t.Skip("a 35 s run per database: set RATCHET_TEST_LONG=1")
	}
	t.Run("PostgreSQL", func(t *testing.T) {
		dsn, schema := dbtest.Postgres(t)
		acrossProcesses(t, dsn, schema, "")
	})
	t.Run("MariaDB", func(t *testing.T) {
		dsn, database := dbtest.MySQL(t)
		cfg, err := drv.ParseDSN(dsn)
		require.NoError(t, err)
		u := url.URL{Scheme: "mysql", User: url.User(cfg.User), Host: cfg.Addr, Path: "/" + database}
		if cfg.Passwd != "" {
			u.User = url.UserPassword(cfg.User, cfg.Passwd)
		}
		acrossProcesses(t, u.String(), "", "")
	})
	t.Run("SQLite", func(t *testing.T) {
		acrossProcesses(t, "sqlite", "", filepath.Join(t.TempDir(), "shared.db"))
	})
}

func acrossProcesses(t *testing.T, spec, schema, db string) {
	const nodes, run = 3, 30 * time.Second
	ctx := context.Background()
	// Migrate once before the nodes start, as a deployment would.
	st, err := storeflag.Open(ctx, spec, db, schema, true)
	require.NoError(t, err)
	require.NoError(t, st.Close())
	var procs []*exec.Cmd
	for i := range nodes {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), envNodeStore+"="+spec, envNodeSchema+"="+schema, envNodeDB+"="+db, fmt.Sprintf("%s=node-%d", envNodeID, i+1))
		cmd.Stderr = os.Stderr
		require.NoError(t, cmd.Start())
		procs = append(procs, cmd)
	}
	start := time.Now()
	timer := time.NewTimer(run / 2)
	<-timer.C
	require.NoError(t, procs[0].Process.Kill(), "kill node-1 half-way")
	_ = procs[0].Wait()
	timer.Reset(run / 2)
	<-timer.C
	for _, p := range procs[1:] {
		require.NoError(t, p.Process.Signal(syscall.SIGTERM))
	}
	for _, p := range procs[1:] {
		require.NoError(t, p.Wait(), "a node's graceful stop")
	}
	elapsed := time.Since(start)

	st, err = storeflag.Open(ctx, spec, db, schema, true)
	require.NoError(t, err)
	defer st.Close()
	c, err := ratchet.NewClient(st.Store, ratchet.ClientOptions{})
	require.NoError(t, err)
	var slots []time.Time
	o := ratchet.ListOptions{PropertyKey: ratchet.ScheduleProperty, PropertyValue: longSchedule, Limit: 1000}
	for {
		page, err := c.ListJobs(ctx, o)
		require.NoError(t, err)
		for _, j := range page.Jobs {
			slots = append(slots, j.ScheduledAt)
		}
		if page.Next == uuid.Nil {
			break
		}
		o.After = page.Next
	}
	slices.SortFunc(slots, func(a, b time.Time) int { return a.Compare(b) })
	require.NotEmpty(t, slots)
	dups, gaps := 0, 0
	for i := 1; i < len(slots); i++ {
		switch d := slots[i].Sub(slots[i-1]); {
		case d == 0:
			dups++
		case d != time.Second:
			gaps++
			t.Logf("gap of %s after %s", d, slots[i-1].Format(time.TimeOnly))
		}
	}
	info, err := c.GetSchedule(ctx, longSchedule)
	require.NoError(t, err)
	t.Logf("%s: %d processes, node-1 killed after %s, %s in all: %d slots fired (%s .. %s), %d twice, %d gaps, %d skipped",
		st.Desc, nodes, run/2, elapsed.Round(time.Millisecond), len(slots), slots[0].Format(time.TimeOnly), slots[len(slots)-1].Format(time.TimeOnly), dups, gaps, info.Skipped)
	assert.Zero(t, dups, "every slot fired once")
	assert.Zero(t, gaps, "none missed")
	assert.Zero(t, info.Skipped, "none skipped")
	assert.GreaterOrEqual(t, len(slots), int(run/time.Second)-2, "a slot a second")
}
