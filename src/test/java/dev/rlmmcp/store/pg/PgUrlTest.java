package dev.rlmmcp.store.pg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class PgUrlTest {

    @Test
    void takesTheOperatorsFormAndMasksThePassword() {
        PgUrl url = PgUrl.parse("postgresql://rlm:p%40ss%3Aw+rd@db.example:5433/rlm?sslmode=require");
        assertThat(url.jdbc()).isEqualTo("jdbc:postgresql://db.example:5433/rlm?sslmode=require");
        assertThat(url.user()).isEqualTo("rlm");
        assertThat(url.password()).isEqualTo("p@ss:w+rd");
        assertThat(url.toString()).isEqualTo("postgresql://rlm:***@db.example:5433/rlm?sslmode=require");
        assertThat(PgUrl.parse("postgres://h/").jdbc()).isEqualTo("jdbc:postgresql://h/postgres");
    }

    @Test
    void takesAJdbcUrlAsItIs() {
        PgUrl url = PgUrl.parse("jdbc:postgresql://h:1/d?user=u&password=secret");
        assertThat(url.jdbc()).isEqualTo("jdbc:postgresql://h:1/d?user=u&password=secret");
        assertThat(url.toString()).doesNotContain("secret");
    }

    @Test
    void refusesWhatIsNotAPostgresUrlNamingTheOption() {
        assertThatThrownBy(() -> PgUrl.parse("mysql://u:secret@h/d"))
                .hasMessageStartingWith("--cluster-db:")
                .hasMessageNotContaining("secret");
        assertThatThrownBy(() -> PgUrl.parse("postgresql:///d")).hasMessageContaining("names no host");
    }
}
