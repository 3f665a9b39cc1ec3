package sqlite

const (
	rowsPerInsert = 200 // 4,600 parameters per statement, far below SQLite's limit
	tagsPerInsert = 500
)
