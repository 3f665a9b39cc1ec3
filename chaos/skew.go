package chaos

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"
)

// DefaultMaxSkew is the bound of a skew fault's offset when
// Scenario.MaxSkew is zero.
const DefaultMaxSkew = 500 * time.Millisecond

// MaxSkewLimit is the largest Scenario.MaxSkew: half of what the nodes'
// timings in a run tolerate between two clocks, (3 s grace − 1 s heartbeat
// interval) / 2. A node's heartbeat is written with its own clock and read
// by another node's orphan scan against that node's clock, so a live node
// whose clock is behind the scanner's by more than grace − heartbeat
// interval looks dead and has its jobs recovered. Clocks each within
// ±(grace − interval)/2 of the true time never come that far apart.
const MaxSkewLimit = time.Second

// skewClock is the real clock moved by an offset that may change while it
// runs: Now is the real time plus the offset, so that a change steps the
// clock forward or back as a wrong clock corrected by NTP would; timers,
// tickers and sleeps measure real durations.
type skewClock struct {
	clockwork.Clock
	offset atomic.Int64 // nanoseconds
}

func newSkewClock(offset time.Duration) *skewClock {
	c := &skewClock{Clock: clockwork.NewRealClock()}
	c.offset.Store(int64(offset))
	return c
}

func (c *skewClock) set(offset time.Duration) { c.offset.Store(int64(offset)) }

func (c *skewClock) get() time.Duration { return time.Duration(c.offset.Load()) }

// Now is the real time plus the offset.
func (c *skewClock) Now() time.Time { return time.Now().Add(c.get()) }

// Since is Now minus t.
func (c *skewClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// Until is t minus Now.
func (c *skewClock) Until(t time.Time) time.Duration { return t.Sub(c.Now()) }

// The control lines a worker started with --control reads on its standard
// input, one command a line.
const (
	// ControlSkew, followed by a duration ("skew 250ms", "skew -1.5s",
	// "skew 0s"), sets the offset of the node's clock from the real time;
	// the worker answers with a LineSkewed line.
	ControlSkew = "skew"
)

// parseControl reads one control line: the offset of a skew command.
func parseControl(line string) (time.Duration, error) {
	f := strings.Fields(line)
	if len(f) != 2 || f[0] != ControlSkew {
		return 0, fmt.Errorf("chaos: unknown control line %q (want %q and a duration)", line, ControlSkew)
	}
	d, err := time.ParseDuration(f[1])
	if err != nil {
		return 0, fmt.Errorf("chaos: control line %q: %w", line, err)
	}
	return d, nil
}

// followControl applies the control lines of in to clock until in ends,
// answering each skew with a LineSkewed line on out.
func followControl(in io.Reader, clock *skewClock, out *LineWriter, node string, log *slog.Logger) {
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		d, err := parseControl(line)
		if err != nil {
			log.Warn("chaos: control line refused", "err", err)
			continue
		}
		clock.set(d)
		log.Info("chaos: node clock skewed", "offset", d.String())
		_ = out.Write(Line{Event: LineSkewed, Node: node, Skew: d.String()})
	}
}
