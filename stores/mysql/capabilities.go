package mysql

import (
	"github.com/google/uuid"
)

// propertiesByPrefixSQL reads the job's properties whose key starts with
// prefix, byte for byte (the PrefixSQL of sqlcore.PropertyReads).
func (s *Store) propertiesByPrefixSQL(jobID uuid.UUID, prefix string) (string, []any) {
	return s.sql.propertiesByPrefix, []any{int64(len(prefix)), []byte(prefix), binID(jobID)}
}

// findByPropertySQL reads the ids of the jobs with property key = value
// (the FindSQL of sqlcore.PropertyReads).
func (s *Store) findByPropertySQL(key, value string, limit int) (string, []any) {
	if limit > 0 {
		return s.sql.findByProperty, []any{[]byte(key), []byte(value), int64(limit)}
	}
	return s.sql.findAllBy, []any{[]byte(key), []byte(value)}
}
