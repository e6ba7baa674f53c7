package dev.rlmmcp.store.pg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rlmmcp.e2e.support.PostgresServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

/** The test PostgreSQL itself: it starts, takes connections (with its password when it has one), and leaves nothing. */
class PostgresServerIT {

    @Test
    void startsWithPasswordAndCleansUp() throws Exception {
        Path dir;
        try (PostgresServer pg = PostgresServer.start("127.0.0.1", "s3cret pw")) {
            dir = pg.log().getParent();
            try (Connection c = DriverManager.getConnection(pg.jdbcUrl());
                    Statement s = c.createStatement();
                    ResultSet r = s.executeQuery("SELECT 1 + 1")) {
                assertThat(r.next()).isTrue();
                assertThat(r.getInt(1)).isEqualTo(2);
            }
            String wrong = "jdbc:postgresql://127.0.0.1:" + pg.port() + "/postgres?user=postgres&password=nope";
            assertThatThrownBy(() -> DriverManager.getConnection(wrong)).isInstanceOf(SQLException.class);
            assertThat(pg.url()).isEqualTo("postgresql://postgres:s3cret%20pw@127.0.0.1:" + pg.port() + "/postgres");
            String other = pg.createDatabase("other_db");
            try (Connection c = DriverManager.getConnection(other)) {
                assertThat(c.getCatalog()).isEqualTo("other_db");
            }
        }
        assertThat(Files.exists(dir)).isFalse();
    }
}
