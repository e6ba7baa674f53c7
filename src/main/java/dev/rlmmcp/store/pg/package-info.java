/**
 * Cluster mode's shared state in PostgreSQL (the official JDBC driver): {@link dev.rlmmcp.store.pg.PgCluster}
 * opens the database and creates or migrates its schema; {@link dev.rlmmcp.store.pg.Leases} holds node leases,
 * session ownership with epochs, and the home nodes of MCP sessions (the database's clock decides expiry);
 * {@link dev.rlmmcp.store.pg.PgSessionDatabase} is the {@link dev.rlmmcp.store.ClusterSessionDatabase} whose
 * every write is fenced by owner node and epoch. Part of the store layer: it may use {@code dev.rlmmcp.store}
 * and {@code dev.rlmmcp.base}; {@code dev.rlmmcp.store} does not use it (the cluster layer wires it in).
 */
package dev.rlmmcp.store.pg;
