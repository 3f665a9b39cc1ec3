package bench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// Each quarter's rate is its jobs over the time from the crossing of the
// quarter before (the start for the first) to its own.
func TestQuarterMarks(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	q := newQuarterMarks(1000, t0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	for n := 1; n <= 1000; n++ {
		// 250 jobs in 1 s, then 2 s, 2.5 s and 5 s.
		var when time.Time
		switch {
		case n <= 250:
			when = at(float64(n) / 250)
		case n <= 500:
			when = at(1 + 2*float64(n-250)/250)
		case n <= 750:
			when = at(3 + 2.5*float64(n-500)/250)
		default:
			when = at(5.5 + 5*float64(n-750)/250)
		}
		q.worked(n, when)
	}
	r := q.rates()
	assert.InDeltaSlice(t, []float64{250, 125, 100, 50}, r[:], 1e-6)
	res := Result{Mode: ModeBurndown, Jobs: 1000, InsertTime: time.Second, WorkTime: 10500 * time.Millisecond, QuarterRates: r}
	assert.Equal(t, "250, 125, 100, 50 jobs/s (last / first 0.20)", res.quarters())
	assert.Equal(t, "insert 1000 jobs/s, work 95 jobs/s; quarters 250, 125, 100, 50 jobs/s (last / first 0.20)", res.Summary())

	// Quarters not crossed have no rate, and a result without them says
	// nothing of them.
	q = newQuarterMarks(1000, t0)
	q.worked(300, at(3))
	r = q.rates()
	assert.InDeltaSlice(t, []float64{250.0 / 3, 0, 0, 0}, r[:], 1e-6)
	assert.Equal(t, "insert 0 jobs/s, work 0 jobs/s", Result{Mode: ModeBurndown}.Summary())
}
