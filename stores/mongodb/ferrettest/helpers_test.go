package ferrettest_test

import (
	"encoding/hex"
	"strconv"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

func uuidHex(id uuid.UUID) string { return hex.EncodeToString(id[:]) }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func optionsUpsert() *options.UpdateOneOptionsBuilder { return options.UpdateOne().SetUpsert(true) }
