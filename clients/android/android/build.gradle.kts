// dev.sheetd:sheetd-android — the thin Views (BottomSheetDialog) and Compose (ModalBottomSheet) adapters
// over :core. Needs the Android SDK and Material Components: not built on the sheetd build machines.
plugins {
    id("com.android.library")
    id("org.jetbrains.kotlin.android")
    id("org.jetbrains.kotlin.plugin.compose")
    `maven-publish`
}

android {
    namespace = "dev.sheetd.android"
    compileSdk = 35
    defaultConfig {
        minSdk = 23
    }
    buildFeatures { compose = true }
    compileOptions {
        sourceCompatibility = JavaVersion.VERSION_17
        targetCompatibility = JavaVersion.VERSION_17
    }
    kotlinOptions { jvmTarget = "17" }
    publishing {
        singleVariant("release") { withSourcesJar() }
    }
}

dependencies {
    api(project(":core"))
    implementation("org.jetbrains.kotlinx:kotlinx-coroutines-android:1.8.1")
    implementation("com.google.android.material:material:1.12.0")
    implementation("androidx.activity:activity-ktx:1.9.3")
    implementation(platform("androidx.compose:compose-bom:2025.05.00"))
    // 1.4: ModalBottomSheetProperties(shouldDismissOnBackPress, shouldDismissOnClickOutside)
    implementation("androidx.compose.material3:material3:1.4.0")
    implementation("androidx.compose.ui:ui")
}

publishing {
    publications {
        register<MavenPublication>("release") {
            artifactId = "sheetd-android"
            afterEvaluate { from(components["release"]) }
        }
    }
}
