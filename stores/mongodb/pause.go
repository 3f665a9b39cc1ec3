package mongodb

import (
	"context"
	"fmt"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// A paused task is one document {_id: task, since: µs} of the pauses
// collection. A claim reads the pauses of its tasks before it reads a
// candidate (unpaused), so a claim that starts after PauseTask returned
// takes none of the task's jobs.

// PauseTask pauses task from now on: one insert, whose duplicate key
// means it was paused already (its first time stays). It implements
// [spi.TaskPauser].
func (s *Store) PauseTask(ctx context.Context, task string, now time.Time) (bool, error) {
	if task == "" {
		return false, fmt.Errorf("mongodb: pause task: the task name is empty")
	}
	done, err := s.enter()
	if err != nil {
		return false, err
	}
	defer done()
	_, err = s.pauses.InsertOne(ctx, bson.M{"_id": task, "since": timeUS(now)})
	switch {
	case mongo.IsDuplicateKeyError(err):
		return false, nil
	case err != nil:
		return false, fail("pause task", err)
	}
	return true, nil
}

// ResumeTask deletes the pause of task and reports whether there was one.
// It implements [spi.TaskPauser].
func (s *Store) ResumeTask(ctx context.Context, task string) (bool, error) {
	done, err := s.enter()
	if err != nil {
		return false, err
	}
	defer done()
	r, err := s.pauses.DeleteOne(ctx, bson.M{"_id": task})
	if err != nil {
		return false, fail("resume task", err)
	}
	return r.DeletedCount == 1, nil
}

// PausedTasks returns the paused tasks, ordered by name. It implements
// [spi.TaskPauser].
func (s *Store) PausedTasks(ctx context.Context) ([]spi.PausedTask, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	cur, err := s.pauses.Find(ctx, bson.M{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, fail("read paused tasks", err)
	}
	var docs []struct {
		Task  string `bson:"_id"`
		Since int64  `bson:"since"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fail("read paused tasks", err)
	}
	out := make([]spi.PausedTask, len(docs))
	for i, d := range docs {
		out[i] = spi.PausedTask{Task: d.Task, Since: usTime(d.Since)}
	}
	return out, nil
}

// unpaused returns tasks without the paused ones: one read of the pauses
// of those tasks, by _id.
func (s *Store) unpaused(ctx context.Context, tasks []string) ([]string, error) {
	cur, err := s.pauses.Find(ctx, bson.M{"_id": bson.M{"$in": tasks}}, options.Find().SetProjection(bson.M{"_id": 1}))
	if err != nil {
		return nil, fmt.Errorf("read the paused tasks: %w", err)
	}
	var docs []struct {
		Task string `bson:"_id"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("read the paused tasks: %w", err)
	}
	if len(docs) == 0 {
		return tasks, nil
	}
	paused := make(map[string]bool, len(docs))
	for _, d := range docs {
		paused[d.Task] = true
	}
	return slices.DeleteFunc(slices.Clone(tasks), func(t string) bool { return paused[t] }), nil
}
