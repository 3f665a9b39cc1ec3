package ratchet

import (
	"crypto/rand"
	"encoding/binary"
	"sync"
	"time"

	"github.com/google/uuid"
)

// idGenerator makes UUIDv7 job ids from the client's clock, so ids follow
// the clock (fake or real) and sort by creation within one generator: the
// 12-bit rand_a field counts up within a millisecond.
type idGenerator struct {
	mu     sync.Mutex
	lastMs int64
	seq    uint16
}

func newIDGenerator() *idGenerator { return &idGenerator{} }

func (g *idGenerator) next(now time.Time) uuid.UUID {
	ms := now.UnixMilli()
	g.mu.Lock()
	if ms <= g.lastMs {
		ms = g.lastMs
		g.seq++
		if g.seq > 0x0fff {
			ms++
			g.seq = 0
		}
	} else {
		g.seq = 0
	}
	g.lastMs = ms
	seq := g.seq
	g.mu.Unlock()

	var u uuid.UUID
	_, _ = rand.Read(u[8:])
	var ts [8]byte
	binary.BigEndian.PutUint64(ts[:], uint64(ms))
	copy(u[0:6], ts[2:8])
	u[6] = 0x70 | byte(seq>>8)
	u[7] = byte(seq)
	u[8] = (u[8] & 0x3f) | 0x80
	return u
}
