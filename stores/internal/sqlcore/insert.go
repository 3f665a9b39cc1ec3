package sqlcore

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// SQLTx returns the application's transaction given to a database/sql
// store's InsertJobsTx, or an error naming the type it got; store names
// the store in it ("the MySQL store").
func SQLTx(txAny any, store string) (*sql.Tx, error) {
	tx, ok := txAny.(*sql.Tx)
	if !ok {
		return nil, fmt.Errorf("transaction of type %T, %s needs a *sql.Tx", txAny, store)
	}
	if tx == nil {
		return nil, errors.New("nil transaction")
	}
	return tx, nil
}

// Dedupe resolves the idempotency keys of an insert batch: existing holds
// the ids of the keys already stored (and is updated with the batch's own).
// A job whose key exists, in the database or earlier in the batch, is not
// written: its result carries the existing id and Duplicate. It returns
// one result per job and the jobs to write.
func Dedupe(jobs []*spi.Job, existing map[string]uuid.UUID) (res []spi.InsertResult, fresh []*spi.Job) {
	res = make([]spi.InsertResult, len(jobs))
	fresh = make([]*spi.Job, 0, len(jobs))
	for i, j := range jobs {
		if k := j.IdempotencyKey; k != "" {
			if id, ok := existing[k]; ok {
				res[i] = spi.InsertResult{ID: id, Duplicate: true}
				continue
			}
			existing[k] = j.ID
		}
		res[i] = spi.InsertResult{ID: j.ID}
		fresh = append(fresh, j)
	}
	return res, fresh
}
