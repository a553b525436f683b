# Shared functions of the classic-db hooks, sourced by each hook.
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

# address prints this unit's address as clients reach it.
address() {
	addr_v=$(unit-get private-address)
	if [ -z "$addr_v" ]; then
		addr_v=127.0.0.1
	fi
	printf '%s\n' "$addr_v"
}

# sort_units sorts unit names on stdin by service, then unit number, so
# that db/2 comes before db/10.
sort_units() {
	LC_ALL=C sort -t/ -k1,1 -k2,2n
}

# password SERVICE prints the password of a client service: the first 16
# hex digits of sha256("<secret>/<service>"). The same inputs always give
# the same password, so running a hook again changes nothing.
password() {
	pw_secret=$(config-get secret)
	printf '%s/%s' "$pw_secret" "$1" | sha256sum | cut -c1-16
}

# grant RELATION_ID answers every client unit in the relation that asked
# for a database (database=<name> in its settings): one user per client
# service, and allowed-units listing exactly the units that asked, so a
# client never connects before it is listed. host and port are always
# published; the credentials are withdrawn when the last client leaves.
grant() {
	grant_rid=$1
	grant_host=$(address)
	grant_port=$(config-get port)
	grant_units=$(relation-list -r "$grant_rid")
	grant_asked=""
	grant_names=""
	for grant_unit in $grant_units; do
		grant_name=$(relation-get -r "$grant_rid" database "$grant_unit")
		if [ -n "$grant_name" ]; then
			grant_asked="$grant_asked $grant_unit"
			grant_names="$grant_names $grant_name"
		fi
	done
	if [ -z "$grant_asked" ]; then
		relation-set -r "$grant_rid" host="$grant_host" port="$grant_port" \
			user= password= database= allowed-units=
		return 0
	fi
	grant_user=$(relation-list -r "$grant_rid" --app)
	if [ -z "$grant_user" ]; then
		grant_first=$(printf '%s\n' $grant_asked | sort_units | head -n 1)
		grant_user=${grant_first%/*}
	fi
	grant_password=$(password "$grant_user")
	# Of several databases asked for, the smallest name wins.
	grant_database=$(printf '%s\n' $grant_names | LC_ALL=C sort | head -n 1)
	grant_allowed=$(printf '%s\n' $grant_asked | sort_units | tr '\n' ' ')
	grant_allowed=${grant_allowed% }
	relation-set -r "$grant_rid" host="$grant_host" port="$grant_port" \
		user="$grant_user" password="$grant_password" \
		database="$grant_database" allowed-units="$grant_allowed"
}

# grant_all answers every db relation, for changes that affect them all
# (port, secret).
grant_all() {
	all_rids=$(relation-ids db)
	for all_rid in $all_rids; do
		grant "$all_rid"
	done
}

# publish_cluster puts this unit's address in the peer relation; the
# leader also names itself primary in the service's bag.
publish_cluster() {
	pub_host=$(address)
	pub_leader=$(is-leader)
	pub_rids=$(relation-ids cluster)
	for pub_rid in $pub_rids; do
		relation-set -r "$pub_rid" address="$pub_host"
		if [ "$pub_leader" = True ]; then
			relation-set -r "$pub_rid" --app primary="$JUJU_UNIT_NAME"
		fi
	done
}

# clients prints, one per line, the client units that asked for a
# database over any db relation.
clients() {
	cl_rids=$(relation-ids db)
	for cl_rid in $cl_rids; do
		cl_units=$(relation-list -r "$cl_rid")
		for cl_unit in $cl_units; do
			cl_name=$(relation-get -r "$cl_rid" database "$cl_unit")
			if [ -n "$cl_name" ]; then
				printf '%s\n' "$cl_unit"
			fi
		done
	done
}

# update_status reports the unit's role and how many clients it serves.
update_status() {
	st_list=$(clients)
	st_n=0
	if [ -n "$st_list" ]; then
		st_n=$(printf '%s\n' "$st_list" | sort -u | wc -l)
		st_n=$((st_n))
	fi
	if [ "$st_n" -eq 1 ]; then
		st_clients="1 client"
	else
		st_clients="$st_n clients"
	fi
	st_primary=""
	st_rids=$(relation-ids cluster)
	for st_rid in $st_rids; do
		st_primary=$(relation-get -r "$st_rid" --app primary)
	done
	st_leader=$(is-leader)
	if [ "$st_leader" = True ]; then
		status-set active "primary, $st_clients"
	elif [ -n "$st_primary" ]; then
		status-set active "replica of $st_primary, $st_clients"
	else
		status-set waiting "waiting for a primary, $st_clients"
	fi
}
