package cluster

import (
	"math/rand/v2"
	"time"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/simtest/internal/simtime"
)

// Rate-limited submissions (ratchet.WithRateLimit). Where the store keeps
// rate limits, about one ordinary arrival in seven is one to three jobs
// of task "work" submitted through the SDK's client under one of two rate
// limits (rateLimits), drawn from a stream of their own.
//
// The invariant, rate-limit: the model keeps the starts (claim times) of
// each limit; no claim may start a job of a limit while as many of its
// starts as the limit happened in the period before, counting the jobs the
// claim takes. The model's claim (claim-order) passes over such jobs as it
// does a full resource's.
const invRateLimit = "rate-limit"

// rateLimits are the limits of the workload: key, starts and period.
var rateLimits = []struct {
	key    string
	n      int
	period time.Duration
}{{"rk0", 2, 3 * time.Second}, {"rk1", 1, 2 * time.Second}}

// rateModel is the rate workload's own stream of draws.
type rateModel struct{ rng *rand.Rand }

// rateTick draws whether this arrival is a rate-limited submission.
func (w *world) rateTick() bool {
	if w.sc.NoUnique || spi.CapabilitiesOf(w.store).Rates == nil {
		return false
	}
	if w.rq == nil {
		w.rq = &rateModel{rng: rand.New(rand.NewPCG(uint64(w.seed), 0x7261_7465))}
	}
	return w.rq.rng.IntN(7) == 0
}

// window prunes the starts of resource older than period before now and
// returns those left.
func (m *model) window(resource string, period time.Duration, now time.Time) []time.Time {
	starts := m.rates[resource]
	i := 0
	for i < len(starts) && !starts[i].After(now.Add(-period)) {
		i++
	}
	m.rates[resource] = starts[i:]
	return starts[i:]
}

// checkRates checks a claim at now against the model's rate windows; false
// when it started a job of a full one.
func (w *world) checkRates(n *node, now time.Time, got []*spi.Job) bool {
	taking := map[string]int{}
	for _, g := range got {
		j := w.byID[g.ID]
		if j == nil || j.ratePeriod == 0 {
			continue
		}
		w.check(invRateLimit)
		before := len(w.window(j.resource, j.ratePeriod, now))
		if taking[j.resource]++; before+taking[j.resource] > j.limit {
			w.fail(invRateLimit, []*sjob{j}, []*node{n}, "%s started %s at %s: %d starts of rate limit %s in the %s before, and this claim's %d; the limit is %d",
				n.id, j.label, simtime.Offset(now.Sub(w.start)), before, j.resource, j.ratePeriod, taking[j.resource], j.limit)
			return false
		}
	}
	return true
}

// submitRated submits one to three rate-limited jobs through the SDK's
// client and adds them to the model.
func (w *world) submitRated() error {
	if w.uq == nil {
		w.uq = &uniqueModel{holders: map[ukey]*sjob{}, debounced: map[int]dwindow{}}
	}
	client, err := w.uniqueClient()
	if err != nil {
		return err
	}
	r := rateLimits[w.rq.rng.IntN(len(rateLimits))]
	k := 1 + w.rq.rng.IntN(3)
	now := w.now().Truncate(time.Microsecond) // the client's clock, as it stamps a job
	var desc string
	for range k {
		id, err := client.SubmitRaw(w.ctx, "work", []byte(`{"rate":true}`), ratchet.WithRateLimit(r.key, r.n, r.period))
		if err != nil {
			return w.storeErr("InsertJobs (a rate-limited submission)", err)
		}
		j := w.addSubmitted(id, now)
		j.resource, j.limit, j.ratePeriod = spi.RateResource(r.key, r.period), r.n, r.period
		desc += " " + j.label
	}
	w.tracef(nil, nil, "client submit rate-limited %s (%d per %s):%s", r.key, r.n, r.period, desc)
	return nil
}
