// The Android client's Gradle build (for apps and for publishing; not run on the sheetd build machines,
// which have no Android SDK: `make android-test` compiles and tests :core with Debian's kotlinc instead).
pluginManagement {
    repositories {
        google()
        mavenCentral()
        gradlePluginPortal()
    }
}
dependencyResolutionManagement {
    repositories {
        google()
        mavenCentral()
    }
}
rootProject.name = "sheetd-android-client"
include(":core", ":android")
