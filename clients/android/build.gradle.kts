// Versions of the toolchain the library is built with for apps (Android Gradle Plugin 8.7, Kotlin 2.0).
plugins {
    id("com.android.library") version "8.7.3" apply false
    id("org.jetbrains.kotlin.android") version "2.0.21" apply false
    id("org.jetbrains.kotlin.jvm") version "2.0.21" apply false
    id("org.jetbrains.kotlin.plugin.compose") version "2.0.21" apply false
}

allprojects {
    group = "dev.sheetd"
    version = "0.1.0" // SheetdClient.VERSION
}
