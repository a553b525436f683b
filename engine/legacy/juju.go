package legacy

import (
	"crypto/sha256"
	"fmt"
)

// JujuVersion is what hooks find in JUJU_VERSION: the Juju release whose
// hook environment and tools the adapter follows. Charm libraries gate
// features on it (ops refuses application data below 2.7 and treats a
// missing version as 0.0.0).
const JujuVersion = "3.6.8"

// ModelUUID is the JUJU_MODEL_UUID of an environment: a version-5-style
// UUID derived from its name, so that it stays the same across runs,
// agents and restarts, as a Juju model's does.
func ModelUUID(model string) string {
	sum := sha256.Sum256([]byte("fixpoint model\x00" + model))
	b := sum[:16]
	b[6] = b[6]&0x0f | 0x50 // version 5 (name-based)
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
