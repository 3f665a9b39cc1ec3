package mongodb

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The history of the job counts (spi.StatsSampleStore): one document per
// minute in the samples collection, its _id the minute in Unix seconds and
// its counts the stored form of spi.EncodeStatsCounts. The unique _id
// keeps the first sample of a minute: a second insert of that minute fails
// with a duplicate key, whichever process samples. The reads and the
// deletion of old samples go along _id, so the collection needs no index
// of its own (and is created by its first insert).

var _ spi.StatsSampleStore = (*Store)(nil)

// sampleDoc is one minute's sample.
type sampleDoc struct {
	Minute int64  `bson:"_id"`
	Counts string `bson:"counts"`
}

// RecordStatsSample inserts smp as the document of its minute, which a
// duplicate-key error reports kept already (the sample is then not kept),
// and then deletes the documents older than spi.StatsSampleRetention
// before that minute. It implements [spi.StatsSampleStore].
func (s *Store) RecordStatsSample(ctx context.Context, smp spi.StatsSample) (bool, error) {
	const op = "record a stats sample"
	done, err := s.enter()
	if err != nil {
		return false, err
	}
	defer done()
	minute := smp.Minute()
	kept := true
	_, err = s.samples.InsertOne(ctx, sampleDoc{Minute: minute.Unix(), Counts: spi.EncodeStatsCounts(smp.Counts)})
	switch {
	case mongo.IsDuplicateKeyError(err):
		kept = false // the minute has its sample
	case err != nil:
		return false, fail(op, fmt.Errorf("insert the sample of %s: %w", minute.Format(time.RFC3339), err))
	}
	cut := minute.Add(-spi.StatsSampleRetention).Unix()
	if _, err := s.samples.DeleteMany(ctx, bson.M{"_id": bson.M{"$lt": cut}}); err != nil {
		return kept, fail(op, fmt.Errorf("delete the samples before %s: %w", time.Unix(cut, 0).UTC().Format(time.RFC3339), err))
	}
	return kept, nil
}

// StatsSamples reads the documents from since's minute on along _id, at
// most limit (zero or less: spi.StatsSampleRetention's minutes). A
// document whose counts cannot be read is left out. It implements
// [spi.StatsSampleStore].
func (s *Store) StatsSamples(ctx context.Context, since time.Time, limit int) ([]spi.StatsSample, error) {
	const op = "read the stats samples"
	if limit <= 0 {
		limit = int(spi.StatsSampleRetention / time.Minute)
	}
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	from := since.UTC().Truncate(time.Minute).Unix()
	cur, err := s.samples.Find(ctx, bson.M{"_id": bson.M{"$gte": from}},
		options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(int64(limit)))
	if err != nil {
		return nil, fail(op, err)
	}
	defer func() { _ = cur.Close(context.WithoutCancel(ctx)) }()
	out := []spi.StatsSample{}
	for cur.Next(ctx) {
		var d sampleDoc
		if err := cur.Decode(&d); err != nil {
			continue // left out (spi.StatsSampleStore.StatsSamples)
		}
		counts, err := spi.DecodeStatsCounts(d.Counts)
		if err != nil {
			continue // left out, as above
		}
		out = append(out, spi.StatsSample{At: time.Unix(d.Minute, 0).UTC(), Counts: counts})
	}
	if err := cur.Err(); err != nil {
		return nil, fail(op, err)
	}
	return out, nil
}
