// The example app. The library comes from ../../clients/android by its coordinates
// (dev.sheetd:sheetd-android), substituted by the included build: an app outside this repository
// declares the same dependency and gets it from its Maven repository instead.
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
rootProject.name = "sheetd-android-example"
includeBuild("../../clients/android")
include(":app")
