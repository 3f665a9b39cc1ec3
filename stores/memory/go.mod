module github.com/ratchet-go/ratchet/stores/memory

go 1.26.0

require (
	github.com/google/uuid v1.6.0
	github.com/ratchet-go/ratchet/sdk v0.1.0
	github.com/ratchet-go/ratchet/tck v0.1.0
)

require (
	github.com/stretchr/testify v1.12.1 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)

replace github.com/ratchet-go/ratchet/sdk => ../../sdk

replace github.com/ratchet-go/ratchet/tck => ../../tck

replace github.com/ratchet-go/ratchet/internal/stored => ../../internal/stored
