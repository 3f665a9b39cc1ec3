package sqlcore

import (
	"database/sql"
	"fmt"
	"sync"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Gate admits a store's operations until the store closes. The zero value
// is open.
type Gate struct {
	mu     sync.RWMutex // held for reading by every operation, for writing by Close
	closed bool
}

// Enter starts an operation, or fails with spi.ErrClosed once the store
// closed; the returned func ends the operation.
func (g *Gate) Enter() (func(), error) {
	g.mu.RLock()
	if g.closed {
		g.mu.RUnlock()
		return nil, spi.ErrClosed
	}
	return g.mu.RUnlock, nil
}

// Close waits for the operations in progress, shuts the gate and runs
// release (the store's own closing) once; it reports whether this call
// closed the gate. Later calls run nothing and report false.
func (g *Gate) Close(release func() error) (closed bool, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false, nil
	}
	g.closed = true
	return true, release()
}

// CloseDB is a store's Close over a database/sql pool: it shuts the gate
// (waiting for operations in progress) and closes db when the store owns
// it, naming the store (for example "sqlite: close") in the error. Later
// calls return nil.
func (g *Gate) CloseDB(db *sql.DB, owns bool, what string) error {
	_, err := g.Close(func() error {
		if !owns {
			return nil
		}
		if err := db.Close(); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	})
	return err
}
