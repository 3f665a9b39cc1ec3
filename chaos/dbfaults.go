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
		if slices.Contains(sc.Faults, FaultRestartDB) {
			return fmt.Errorf("chaos: restart-db makes no sense on SQLite: there is no database server to restart")
		}
	}
	if slices.Contains(sc.Faults, FaultRestartDB) && len(sc.RestartDB) == 0 {
		return fmt.Errorf("chaos: fault kind restart-db needs the command that restarts the database and returns once it is up again (Scenario.RestartDB, ratchet chaos --db-restart)")
	}
	if sc.MaxSkew < 0 || sc.MaxSkew > MaxSkewLimit {
		return fmt.Errorf("chaos: max skew %s out of range: above 0 and at most %s, half of what the nodes' timings tolerate between two clocks (3s grace - 1s heartbeat interval)", sc.MaxSkew, MaxSkewLimit)
	}
	return nil
}

// restartDBTimeout bounds a run of Scenario.RestartDB.
const restartDBTimeout = 2 * time.Minute

// restartDB runs the scenario's restart command and returns what it
// printed when it failed.
func (h *harness) restartDB(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, restartDBTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.sc.RestartDB[0], h.sc.RestartDB[1:]...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if len(msg) > 300 {
			msg = msg[len(msg)-300:]
		}
		return fmt.Errorf("%s: %w: %s", strings.Join(h.sc.RestartDB, " "), err, msg)
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
	gate *sync.RWMutex
}

// Capabilities forwards the inner store's.
func (g *gatedStore) Capabilities() spi.Capabilities { return spi.CapabilitiesOf(g.Store) }

// InsertJobs inserts while no database restart is in progress.
func (g *gatedStore) InsertJobs(ctx context.Context, jobs []*spi.Job, o spi.InsertOptions) ([]spi.InsertResult, error) {
	g.gate.RLock()
	defer g.gate.RUnlock()
	return g.Store.InsertJobs(ctx, jobs, o)
}

// faultDB injects a restart-db: it runs the restart command while holding
// the gate, then waits until the store answers again.
func (h *harness) faultDB(ctx context.Context, f Fault) {
	inj := Injection{At: Duration(time.Since(h.began).Round(time.Millisecond)), Kind: f.Kind}
	began := time.Now()
	h.dbGate.Lock()
	err := h.restartDB(ctx)
	if err != nil {
		inj.Note = "skipped: the restart command failed: " + err.Error()
	} else if err := h.awaitDB(ctx, 30*time.Second); err != nil {
		inj.Note = err.Error()
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
