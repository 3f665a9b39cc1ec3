package mongodb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// TryAcquireLease gives the lease name to owner until now+ttl when it is
// free, expired (its expiry at or before now), or already owner's (a
// renewal), and reports whether owner holds it afterwards. It implements
// [spi.LeaseStore].
//
// A lease is one document {_id: name, owner, exp: µs}. The grant is a
// conditional update ({_id, $or: [owner is owner, exp <= now]}); when that
// matches nothing, an insert creates the lease, and the unique _id makes
// exactly one of several racing owners win: a duplicate-key error means
// another owner holds it.
func (s *Store) TryAcquireLease(ctx context.Context, name, owner string, ttl time.Duration, now time.Time) (bool, error) {
	if name == "" || owner == "" || ttl <= 0 {
		return false, fmt.Errorf("mongodb: lease %q for %q: name, owner and a positive ttl are required", name, owner)
	}
	done, err := s.enter()
	if err != nil {
		return false, err
	}
	defer done()
	exp := timeUS(now.Add(ttl))
	r, err := s.leases.UpdateOne(ctx,
		bson.M{"_id": name, "$or": bson.A{bson.M{"owner": owner}, bson.M{"exp": bson.M{"$lte": timeUS(now)}}}},
		bson.M{"$set": bson.M{"owner": owner, "exp": exp}})
	if err != nil {
		return false, fail("acquire lease", err)
	}
	if r.MatchedCount == 1 {
		return true, nil
	}
	_, err = s.leases.InsertOne(ctx, bson.M{"_id": name, "owner": owner, "exp": exp})
	if mongo.IsDuplicateKeyError(err) {
		return false, nil // held by another owner
	}
	if err != nil {
		return false, fail("acquire lease", err)
	}
	return true, nil
}

// ReleaseLease frees the lease if owner holds it (one conditional delete);
// otherwise it does nothing. It implements [spi.LeaseStore].
func (s *Store) ReleaseLease(ctx context.Context, name, owner string) error {
	done, err := s.enter()
	if err != nil {
		return err
	}
	defer done()
	if _, err := s.leases.DeleteOne(ctx, bson.M{"_id": name, "owner": owner}); err != nil {
		return fail("release lease", err)
	}
	return nil
}

// stateDoc is one namespace of a job's state: the JSON byte for byte, and
// its version.
type stateDoc struct {
	JSON    bson.Binary `bson:"j"`
	Version int64       `bson:"v"`
}

// GetState returns job id's state in namespace ns. It implements
// [spi.JobStateStore].
//
// State lives inside the job document, under st.<namespace> (hex-encoded),
// so that every state write is one single-document update whose filter
// holds both the fence (status RUNNING and the claim sequence) and the
// version compare-and-set: fenced writes are atomic with respect to claims,
// completions and recoveries, with no transaction.
func (s *Store) GetState(ctx context.Context, id uuid.UUID, ns string) (spi.VersionedState, bool, error) {
	done, err := s.enter()
	if err != nil {
		return spi.VersionedState{}, false, err
	}
	defer done()
	k := fState + "." + stateKey(ns)
	var d struct {
		State map[string]stateDoc `bson:"st"`
	}
	err = s.jobs.FindOne(ctx, bson.M{fID: idValue(id)}, options.FindOne().SetProjection(bson.M{fID: 1, k: 1})).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return spi.VersionedState{}, false, fmt.Errorf("%w: %s", spi.ErrNotFound, id)
	}
	if err != nil {
		return spi.VersionedState{}, false, fail("get state", fmt.Errorf("job %s namespace %q: %w", id, ns, err))
	}
	st, ok := d.State[stateKey(ns)]
	if !ok {
		return spi.VersionedState{}, false, nil
	}
	return spi.VersionedState{JSON: append([]byte{}, st.JSON.Data...), Version: st.Version}, true, nil
}

// writeState applies one state write; fenced writes name the claim
// sequence fenceSeq.
func (s *Store) writeState(ctx context.Context, id uuid.UUID, ns string, state []byte, expected int64, init, fenced bool, fenceSeq int64) (spi.StateWriteResult, error) {
	done, err := s.enter()
	if err != nil {
		return 0, err
	}
	defer done()
	k := fState + "." + stateKey(ns)
	filter := bson.M{fID: idValue(id)}
	if fenced {
		filter[fStatus] = string(spi.StatusRunning)
		filter[fClaimSeq] = fenceSeq
	}
	var update bson.M
	data := bson.Binary{Subtype: bson.TypeBinaryGeneric, Data: append([]byte{}, state...)}
	if init {
		filter[k] = bson.M{"$exists": false}
		update = bson.M{"$set": bson.M{k: stateDoc{JSON: data, Version: 0}}}
	} else {
		filter[k+".v"] = expected
		update = bson.M{"$set": bson.M{k + ".j": data}, "$inc": bson.M{k + ".v": int64(1)}}
	}
	r, err := s.jobs.UpdateOne(ctx, filter, update)
	if err != nil {
		return 0, fail("write state", fmt.Errorf("job %s namespace %q: %w", id, ns, err))
	}
	if r.MatchedCount == 1 {
		return spi.StateUpdated, nil
	}
	// Nothing matched: say why, from the job as it is now.
	var d struct {
		Status   string `bson:"status"`
		ClaimSeq int64  `bson:"claim_seq"`
	}
	err = s.jobs.FindOne(ctx, bson.M{fID: idValue(id)}, options.FindOne().SetProjection(bson.M{fStatus: 1, fClaimSeq: 1})).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return 0, fmt.Errorf("%w: %s", spi.ErrNotFound, id)
	}
	if err != nil {
		return 0, fail("write state", fmt.Errorf("job %s namespace %q: %w", id, ns, err))
	}
	if fenced && (d.Status != string(spi.StatusRunning) || d.ClaimSeq != fenceSeq) {
		return spi.StateSuperseded, nil
	}
	return spi.StateVersionConflict, nil
}

// InitState creates version 0 of job id's state in ns while the job is
// RUNNING with claimSeq. It implements [spi.JobStateStore].
func (s *Store) InitState(ctx context.Context, id uuid.UUID, ns string, state []byte, claimSeq int64) (spi.StateWriteResult, error) {
	return s.writeState(ctx, id, ns, state, 0, true, true, claimSeq)
}

// UpdateState replaces job id's state in ns and increments its version
// when it is at expectedVersion and the job is RUNNING with claimSeq. It
// implements [spi.JobStateStore].
func (s *Store) UpdateState(ctx context.Context, id uuid.UUID, ns string, state []byte, expectedVersion, claimSeq int64) (spi.StateWriteResult, error) {
	return s.writeState(ctx, id, ns, state, expectedVersion, false, true, claimSeq)
}

// InitStateUnfenced is InitState for writers that own no claim. It
// implements [spi.JobStateStore].
func (s *Store) InitStateUnfenced(ctx context.Context, id uuid.UUID, ns string, state []byte) (spi.StateWriteResult, error) {
	return s.writeState(ctx, id, ns, state, 0, true, false, 0)
}

// UpdateStateUnfenced is UpdateState for writers that own no claim. It
// implements [spi.JobStateStore].
func (s *Store) UpdateStateUnfenced(ctx context.Context, id uuid.UUID, ns string, state []byte, expectedVersion int64) (spi.StateWriteResult, error) {
	return s.writeState(ctx, id, ns, state, expectedVersion, false, false, 0)
}

// propsDoc is the projection of a job's properties.
type propsDoc struct {
	Entries []string `bson:"pv"`
}

// props reads job id's properties.
func (s *Store) props(ctx context.Context, id uuid.UUID) (map[string]string, error) {
	var d propsDoc
	err := s.jobs.FindOne(ctx, bson.M{fID: idValue(id)}, options.FindOne().SetProjection(bson.M{fID: 1, fPropEntries: 1})).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, fmt.Errorf("%w: %s", spi.ErrNotFound, id)
	}
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(d.Entries))
	for _, e := range d.Entries {
		if k, v, ok := parsePropEntry(e); ok {
			out[k] = v
		}
	}
	return out, nil
}

// PutProperty sets job id's property key to value, once. It implements
// [spi.JobPropertyStore].
//
// Properties live inside the job document: the keys in the array pk, and
// each key with its value, encoded as one string, in the array pv (a
// multikey index on pv serves FindJobsByProperty). The write is one
// conditional update, {_id, pk ≠ key}: $push the key and the entry, so of
// two writers of one key exactly one succeeds; when it matches nothing the
// stored value decides between success (the same value) and an error
// wrapping spi.ErrPropertyExists.
func (s *Store) PutProperty(ctx context.Context, id uuid.UUID, key, value string) error {
	if key == "" {
		return fmt.Errorf("mongodb: property of job %s: empty key", id)
	}
	done, err := s.enter()
	if err != nil {
		return err
	}
	defer done()
	for range 3 {
		r, err := s.jobs.UpdateOne(ctx, bson.M{fID: idValue(id), fPropKeys: bson.M{"$ne": key}},
			bson.M{"$push": bson.M{fPropKeys: key, fPropEntries: propEntry(key, value)}})
		if err != nil {
			return fail("put property", fmt.Errorf("job %s property %q: %w", id, key, err))
		}
		if r.MatchedCount == 1 {
			return nil
		}
		props, err := s.props(ctx, id)
		if err != nil {
			if errors.Is(err, spi.ErrNotFound) {
				return err
			}
			return fail("put property", fmt.Errorf("job %s property %q: %w", id, key, err))
		}
		if old, ok := props[key]; ok {
			if old == value {
				return nil
			}
			return fmt.Errorf("%w: job %s property %q", spi.ErrPropertyExists, id, key)
		}
		// The key is listed but its entry is not there yet: only a
		// damaged document does that; try again.
	}
	return fail("put property", fmt.Errorf("job %s property %q: the key is listed without a value", id, key))
}

// GetProperty returns job id's property key. It implements
// [spi.JobPropertyStore].
func (s *Store) GetProperty(ctx context.Context, id uuid.UUID, key string) (string, bool, error) {
	done, err := s.enter()
	if err != nil {
		return "", false, err
	}
	defer done()
	props, err := s.props(ctx, id)
	if err != nil {
		if errors.Is(err, spi.ErrNotFound) {
			return "", false, err
		}
		return "", false, fail("get property", err)
	}
	v, ok := props[key]
	return v, ok, nil
}

// GetPropertiesByPrefix returns job id's properties whose key starts with
// prefix ("" for all). It implements [spi.JobPropertyStore].
func (s *Store) GetPropertiesByPrefix(ctx context.Context, id uuid.UUID, prefix string) (map[string]string, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	props, err := s.props(ctx, id)
	if err != nil {
		if errors.Is(err, spi.ErrNotFound) {
			return nil, err
		}
		return nil, fail("get properties", err)
	}
	for k := range props {
		if !strings.HasPrefix(k, prefix) {
			delete(props, k)
		}
	}
	return props, nil
}

// FindJobsByProperty returns up to limit ids (ascending; all for a limit of
// zero or less) of jobs whose property key equals value: one query on the
// multikey index of pv. It implements [spi.JobPropertyStore].
func (s *Store) FindJobsByProperty(ctx context.Context, key, value string, limit int) ([]uuid.UUID, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	o := options.Find().SetProjection(bson.M{fID: 1}).SetSort(bson.D{{Key: fID, Value: 1}})
	if limit > 0 {
		o.SetLimit(int64(limit))
	}
	cur, err := s.jobs.Find(ctx, bson.M{fPropEntries: propEntry(key, value)}, o)
	if err != nil {
		return nil, fail("find jobs by property", err)
	}
	var docs []struct {
		ID bson.Binary `bson:"_id"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fail("find jobs by property", err)
	}
	out := make([]uuid.UUID, 0, len(docs))
	for _, d := range docs {
		if id, err := binaryID(d.ID); err == nil {
			out = append(out, id)
		}
	}
	slices.SortFunc(out, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	return out, nil
}
