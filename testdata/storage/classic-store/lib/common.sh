# Sourced by every hook: record the hook, and its storage for storage hooks.
log() {
	echo "$*" >>"$FIXPOINT_UNIT_DIR/hooks.log"
}
if [ -n "$JUJU_STORAGE_ID" ]; then
	log "$JUJU_HOOK_NAME $JUJU_STORAGE_ID $JUJU_STORAGE_LOCATION"
else
	log "$JUJU_HOOK_NAME"
fi
