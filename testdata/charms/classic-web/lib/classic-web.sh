# Shared functions of the classic-web hooks, sourced by each hook.
#
# POSIX sh only. There are no local variables in POSIX sh, so each
# function's variables carry its prefix. Every hook tool's output is
# assigned to a variable before use: under set -e a failing tool then
# fails the hook, where inside a word list or an argument it would not.
#
# Lists of unit and database names are split on blanks on purpose; set -f
# keeps a name that other units wrote (database=*) from being globbed.
# shellcheck disable=SC2086
set -f

# Every hook appends a line to hooks.log in the unit's directory when
# fixpoint gives it one ($FIXPOINT_UNIT_DIR): the hook, its relation and
# its remote unit, as `fixpoint debug events` prints events
# ("db-relation-joined db:3 web/1"). Tests and bench/oldhooks read it to
# see which hooks ran; Juju itself has no such directory.
if [ -n "${FIXPOINT_UNIT_DIR:-}" ]; then
	printf '%s\n' "$JUJU_HOOK_NAME${JUJU_RELATION_ID:+ $JUJU_RELATION_ID}${JUJU_REMOTE_UNIT:+ $JUJU_REMOTE_UNIT}" >>"$FIXPOINT_UNIT_DIR/hooks.log"
fi

# conf is web.conf in the unit's own directory (hooks run in the charm
# directory, as in Juju).
conf="${FIXPOINT_UNIT_DIR:-.}/web.conf"

# address prints this unit's address as peers reach it.
address() {
	addr_v=$(unit-get private-address)
	if [ -z "$addr_v" ]; then
		addr_v=127.0.0.1
	fi
	printf '%s\n' "$addr_v"
}

# ask RELATION_ID asks the db side for the configured database.
ask() {
	ask_db=$(config-get database)
	relation-set -r "$1" database="$ask_db"
}

# ask_all asks over every db relation.
ask_all() {
	all_rids=$(relation-ids db)
	for all_rid in $all_rids; do
		ask "$all_rid"
	done
}

# publish_cluster puts this unit's address and port in the peer relation.
publish_cluster() {
	pub_host=$(address)
	pub_port=$(config-get port)
	pub_rids=$(relation-ids cluster)
	for pub_rid in $pub_rids; do
		relation-set -r "$pub_rid" address="$pub_host" port="$pub_port"
	done
}

# find_grant sets g_unit, g_host, g_port, g_user, g_password and
# g_database from the first db unit that lists this unit in its
# allowed-units and published complete credentials: relations by id, units
# by number (relation-ids and relation-list print them in that order), so
# the choice depends on what the unit sees alone. g_unit is empty when no
# db unit grants access yet.
find_grant() {
	g_unit=""
	fg_rids=$(relation-ids db)
	for fg_rid in $fg_rids; do
		fg_units=$(relation-list -r "$fg_rid")
		for fg_unit in $fg_units; do
			fg_allowed=$(relation-get -r "$fg_rid" allowed-units "$fg_unit")
			case " $fg_allowed " in
			*" $JUJU_UNIT_NAME "*) ;;
			*) continue ;;
			esac
			g_host=$(relation-get -r "$fg_rid" host "$fg_unit")
			g_port=$(relation-get -r "$fg_rid" port "$fg_unit")
			g_user=$(relation-get -r "$fg_rid" user "$fg_unit")
			g_password=$(relation-get -r "$fg_rid" password "$fg_unit")
			g_database=$(relation-get -r "$fg_rid" database "$fg_unit")
			if [ -n "$g_host" ] && [ -n "$g_port" ] && [ -n "$g_user" ] && [ -n "$g_password" ] && [ -n "$g_database" ]; then
				g_unit=$fg_unit
				return 0
			fi
		done
	done
}

# write_conf writes web.conf from the grant when its content differs,
# through a temporary file and a rename so no reader sees half of it.
write_conf() {
	wc_new="$conf.tmp"
	umask 077
	{
		printf '# written by the classic-web charm for %s; granted by %s\n' "$JUJU_UNIT_NAME" "$g_unit"
		printf 'host=%s\nport=%s\ndatabase=%s\nuser=%s\npassword=%s\n' "$g_host" "$g_port" "$g_database" "$g_user" "$g_password"
	} > "$wc_new"
	if [ -f "$conf" ] && cmp -s "$wc_new" "$conf"; then
		rm -f "$wc_new"
	else
		mv -f "$wc_new" "$conf"
	fi
}

# connect writes or removes web.conf and reports status: without access
# there is nothing to connect to.
connect() {
	cn_db=$(config-get database)
	cn_rids=$(relation-ids db)
	if [ -z "$cn_db" ]; then
		rm -f "$conf"
		status-set blocked 'config option "database" is empty: set it to the database to ask for'
		return 0
	fi
	if [ -z "$cn_rids" ]; then
		rm -f "$conf"
		status-set blocked "needs a db relation"
		return 0
	fi
	find_grant
	if [ -z "$g_unit" ]; then
		rm -f "$conf"
		status-set waiting "waiting for db access"
		return 0
	fi
	write_conf
	status-set active "connected to $g_host:$g_port db $g_database as $g_user"
}
