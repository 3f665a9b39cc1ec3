package chaos

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/sqlite"
)

// validateFaults refuses the fault kinds that the scenario's store or
// settings cannot take: network faults and database restarts on SQLite,
// a database restart without its command, a skew bound out of range; and
// an SQLite DSN that names no file, or comes with a schema.
func (sc Scenario) validateFaults() error {
	if IsSQLite(sc.DSN) {
		if sc.DSN != "sqlite" {
			if _, err := sqlite.PathFromURL(sc.DSN); err != nil {
				return fmt.Errorf("chaos: %w", err)
			}
		}
		if sc.Schema != "" {
			return fmt.Errorf("chaos: an SQLite store has no schema (got %q): the DSN names the file (sqlite:PATH), or sqlite alone a new temporary one", sc.Schema)
		}
		var net []string
		for _, k := range sc.Faults {
			if k.isNet() {
				net = append(net, string(k))
			}
		}
		if len(net) > 0 {
			return fmt.Errorf("chaos: network faults (%s) make no sense on SQLite: they go through a TCP proxy between a node and a database server, and an SQLite store is a file that each worker opens itself; enable kill, stop, term or skew", strings.Join(net, ", "))
		}
		for _, k := range sc.Faults {
			if k.isDB() {
				return fmt.Errorf("chaos: %s makes no sense on SQLite: there is no database server to restart, fail over or lose", k)
			}
		}
	}
	if slices.Contains(sc.Faults, FaultRestartDB) && len(sc.RestartDB) == 0 {
		return fmt.Errorf("chaos: fault kind restart-db needs the command that restarts the database and returns once it is up again (Scenario.RestartDB, ratchet chaos --db-restart)")
	}
	if slices.Contains(sc.Faults, FaultFailover) && len(sc.Failover) == 0 {
		return fmt.Errorf("chaos: fault kind failover needs the command that fails the database over to its standby and returns once the new primary accepts writes (Scenario.Failover, ratchet chaos --db-failover, or --private-db postgres-standby)")
	}
	if slices.Contains(sc.Faults, FaultDBNodeLoss) && (len(sc.DBNodeLoss) == 0 || len(sc.DBNodeRejoin) == 0) {
		return fmt.Errorf("chaos: fault kind db-node-loss needs the commands that kill one server of the database's cluster and bring it back (Scenario.DBNodeLoss and DBNodeRejoin, ratchet chaos --db-node-loss and --db-node-rejoin, or --private-db galera)")
	}
	if sc.MaxSkew < 0 || sc.MaxSkew > MaxSkewLimit {
		return fmt.Errorf("chaos: max skew %s out of range: above 0 and at most %s, half of what the nodes' timings tolerate between two clocks (3s grace - 1s heartbeat interval)", sc.MaxSkew, MaxSkewLimit)
	}
	return nil
}

// dbCommandTimeout bounds a run of a database fault's command.
const dbCommandTimeout = 2 * time.Minute

// runDBCommand runs a database fault's command and returns what it
// printed when it failed.
func runDBCommand(ctx context.Context, command []string) error {
	ctx, cancel := context.WithTimeout(ctx, dbCommandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, command[0], command[1:]...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if len(msg) > 300 {
			msg = msg[len(msg)-300:]
		}
		return fmt.Errorf("%s: %w: %s", strings.Join(command, " "), err, msg)
	}
	return nil
}

// awaitDB waits until the run's store answers again after a database
// restart, polling it every 100 ms for at most timeout.
func (h *harness) awaitDB(ctx context.Context, timeout time.Duration) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := h.client.ListJobs(qctx, listOne)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			return fmt.Errorf("the database did not answer within %s of its restart: %w", timeout, err)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// listOne is the smallest query of the store, to see that it answers.
var listOne = ratchet.ListOptions{Limit: 1}

// gatedStore is the harness's own store: its inserts (the workload's
// submissions) wait while a restart-db holds the gate, and a restart waits
// for the inserts in flight, so that no submission of the harness meets a
// database going down.
type gatedStore struct {
	spi.Store
	gate  *sync.RWMutex
	retry time.Duration // how long a failed insert is tried again
}

// Capabilities forwards the inner store's.
func (g *gatedStore) Capabilities() spi.Capabilities { return spi.CapabilitiesOf(g.Store) }

// InsertJobs inserts while no database fault is in progress. With retry,
// a failed insert is tried again every 500 ms for that long: a cluster
// may refuse commits for a moment after a fault has ended (a Galera node
// rejoining), and the run is about the nodes, not the harness's own
// submissions. A failed attempt that did commit leaves a job the harness
// does not know of, which the checks read from the database like any
// other.
func (g *gatedStore) InsertJobs(ctx context.Context, jobs []*spi.Job, o spi.InsertOptions) ([]spi.InsertResult, error) {
	deadline := time.Now().Add(g.retry)
	for {
		g.gate.RLock()
		res, err := g.Store.InsertJobs(ctx, jobs, o)
		g.gate.RUnlock()
		if err == nil || ctx.Err() != nil || time.Now().After(deadline) {
			return res, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// faultDB injects a database fault: it runs the fault's command while
// holding the gate (for a lost node, the loss, the fault's duration and the
// rejoin), then waits until the store answers again.
func (h *harness) faultDB(ctx context.Context, f Fault) {
	inj := Injection{At: Duration(time.Since(h.began).Round(time.Millisecond)), Kind: f.Kind}
	began := time.Now()
	h.dbGate.Lock()
	var err error
	switch f.Kind {
	case FaultRestartDB:
		err = runDBCommand(ctx, h.sc.RestartDB)
	case FaultFailover:
		err = runDBCommand(ctx, h.sc.Failover)
	case FaultDBNodeLoss:
		if err = runDBCommand(ctx, h.sc.DBNodeLoss); err == nil {
			inj.from = time.Now()
			select {
			case <-time.After(time.Duration(f.For)):
			case <-ctx.Done():
			}
			err = runDBCommand(ctx, h.sc.DBNodeRejoin)
		}
	}
	if err != nil {
		inj.Note = "skipped: the command failed: " + err.Error()
	} else if err := h.awaitDB(ctx, 30*time.Second); err != nil {
		inj.Note = err.Error()
	}
	if inj.from.IsZero() {
		inj.from = time.Now()
	}
	h.dbGate.Unlock()
	inj.For = Duration(time.Since(began).Round(time.Millisecond))
	h.addInjection(inj)
	h.progress("%-4s for %s %s", inj.Kind, inj.For, inj.Note)
}

// errWorkerExited is the error of a skew whose worker exited before it
// confirmed it.
var errWorkerExited = errors.New("the worker exited")

// skew sets the offset of the process's clock through its control input
// and waits for the worker to confirm it.
func (p *proc) skew(d time.Duration) error {
	if p.stdin == nil {
		return fmt.Errorf("the worker has no control input")
	}
	if _, err := fmt.Fprintf(p.stdin, "%s %s\n", ControlSkew, d); err != nil {
		return fmt.Errorf("write the control line: %w", err)
	}
	deadline := time.NewTimer(5 * time.Second)
	defer deadline.Stop()
	for {
		select {
		case got := <-p.skewed:
			if got == d.String() {
				return nil
			}
		case <-p.exited:
			return errWorkerExited
		case <-deadline.C:
			return fmt.Errorf("the worker did not confirm the skew within 5s (does its main call chaos.WorkerMain?)")
		}
	}
}

// skewText is an offset with its sign: +412ms, -300ms.
func skewText(d Duration) string {
	if d >= 0 {
		return "+" + d.String()
	}
	return d.String()
}
