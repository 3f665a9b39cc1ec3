module github.com/ratchet-go/ratchet/internal/jobjson

go 1.26.0

replace github.com/ratchet-go/ratchet/sdk => ../../sdk

replace github.com/ratchet-go/ratchet/internal/stored => ../stored

require (
	github.com/google/uuid v1.6.0
	github.com/ratchet-go/ratchet/sdk v0.1.0
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/ratchet-go/ratchet/internal/stored v0.1.0 // indirect
	github.com/robfig/cron/v3 v3.0.1 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)
