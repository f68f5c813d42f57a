// Run: gradle :app:installDebug -Psheetd.url=http://10.0.2.2:8080 -Psheetd.user=user-1 -Psheetd.token=<HS256 JWT>
// (10.0.2.2 is the host from the emulator; `make run` serves the example catalog on port 8080).
plugins {
    id("com.android.application")
    id("org.jetbrains.kotlin.android")
    id("org.jetbrains.kotlin.plugin.compose")
}

android {
    namespace = "dev.sheetd.example"
    compileSdk = 35
    defaultConfig {
        applicationId = "dev.sheetd.example"
        minSdk = 23
        targetSdk = 35
        versionCode = 1
        versionName = "2.10.0"
        fun property(name: String, fallback: String) = (project.findProperty(name) as String?) ?: fallback
        buildConfigField("String", "SHEETD_URL", "\"${property("sheetd.url", "http://10.0.2.2:8080")}\"")
        buildConfigField("String", "SHEETD_USER", "\"${property("sheetd.user", "user-1")}\"")
        buildConfigField("String", "SHEETD_TOKEN", "\"${property("sheetd.token", "")}\"")
    }
    buildFeatures {
        compose = true
        buildConfig = true
    }
    compileOptions {
        sourceCompatibility = JavaVersion.VERSION_17
        targetCompatibility = JavaVersion.VERSION_17
    }
    kotlinOptions { jvmTarget = "17" }
}

dependencies {
    implementation("dev.sheetd:sheetd-android:0.1.0")
    implementation("androidx.activity:activity-compose:1.9.3")
    implementation("androidx.lifecycle:lifecycle-runtime-ktx:2.8.7")
    implementation("com.google.android.material:material:1.12.0")
    implementation(platform("androidx.compose:compose-bom:2025.05.00"))
    // 1.4: ModalBottomSheetProperties(shouldDismissOnBackPress, shouldDismissOnClickOutside)
    implementation("androidx.compose.material3:material3:1.4.0")
}
