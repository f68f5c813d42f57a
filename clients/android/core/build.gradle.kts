import org.jetbrains.kotlin.gradle.dsl.JvmTarget

// dev.sheetd:sheetd-core — the JVM core: the typed client, the outbox, the fake, the Material mapping
// as plain types. No Android dependency; the same sources `make android-test` compiles with kotlinc 1.3.
plugins {
    id("org.jetbrains.kotlin.jvm")
    `java-library`
    `maven-publish`
}

java {
    sourceCompatibility = JavaVersion.VERSION_1_8
    targetCompatibility = JavaVersion.VERSION_1_8
    withSourcesJar()
}

kotlin {
    compilerOptions { jvmTarget.set(JvmTarget.JVM_1_8) }
}

dependencies {
    api("org.jetbrains.kotlinx:kotlinx-coroutines-core:1.8.1")
    testImplementation("org.junit.jupiter:junit-jupiter:5.10.3")
    testRuntimeOnly("org.junit.platform:junit-platform-launcher")
}

tasks.test {
    useJUnitPlatform()
    // The tests run against a live sheetd: scripts/android-test.sh starts one and sets SHEETD_TEST_URL,
    // SHEETD_TEST_ADMIN_TOKEN, SHEETD_TEST_JWT_SECRET and SHEETD_TEST_WORK (the example catalog loaded).
    onlyIf { System.getenv("SHEETD_TEST_URL") != null }
}

publishing {
    publications {
        create<MavenPublication>("release") {
            artifactId = "sheetd-core"
            from(components["java"])
            pom {
                name.set("sheetd core client")
                description.set("Typed client of sheetd's user routes, durable event outbox, fake and Material mapping (JVM).")
            }
        }
    }
}
