module github.com/ratchet-go/ratchet/simtest

go 1.26.0

require (
	github.com/google/uuid v1.6.0
	github.com/jonboulle/clockwork v0.5.0
	github.com/ratchet-go/ratchet/engine v0.1.0
	github.com/ratchet-go/ratchet/sdk v0.1.0
	github.com/ratchet-go/ratchet/stores/memory v0.1.0
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/ratchet-go/ratchet/internal/stored v0.1.0 // indirect
	github.com/robfig/cron/v3 v3.0.1 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)

replace (
	github.com/ratchet-go/ratchet/engine => ../engine
	github.com/ratchet-go/ratchet/sdk => ../sdk
	github.com/ratchet-go/ratchet/stores/memory => ../stores/memory
	github.com/ratchet-go/ratchet/tck => ../tck
)

replace github.com/ratchet-go/ratchet/stores/sqlite => ../stores/sqlite

replace github.com/ratchet-go/ratchet/ddl => ../ddl

replace github.com/ratchet-go/ratchet/stores/internal/sqlcore => ../stores/internal/sqlcore

replace github.com/ratchet-go/ratchet/internal/stored => ../internal/stored
