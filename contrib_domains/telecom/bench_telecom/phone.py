"""The customer's phone: 30 device tools, the faults task files set up, and the radio simulation.

Semantics follow tau2-bench's telecom user toolkit (spec in the research notes, quirks in the
README). One deliberate difference: tau2 hands every `connect_vpn` the same VPN-details object,
which `break_vpn` then degrades for every later conversation in the process; here each connection
gets its own record, so conversations never leak state into each other.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, cast

from bench_kernel import ToolKind, Toolkit, tool

from .records import NETWORK_MODES, PHONE_TABLE, APNSettings, PaymentRequest, PhoneDevice, Surroundings, VpnDetails

SIGNAL_ICONS = {"none": "📵 No Signal", "poor": "📶¹ Poor", "fair": "📶² Fair", "good": "📶³ Good", "excellent": "📶⁴ Excellent"}
SIM_TEXT = {
    "active": "Your SIM card is active and working.",
    "missing": "No SIM card detected in the phone.",
    "locked_pin": "The SIM card is locked with a PIN code.",
    "locked_puk": "The SIM card is locked with a PUK code.",
}
SPEED_RANGES = {"2G": (0.1, 0.4), "3G": (1.0, 5.0), "4G": (10.0, 100.0), "5G": (50.0, 500.0), "none": (0.0, 0.0)}
SIGNAL_FACTORS = {"poor": 0.2, "fair": 0.5, "good": 0.8, "excellent": 1.0, "none": 0.0}
SPEED_ADVICE = {
    "Very Poor": "Connection is very slow. Basic web browsing might be difficult.",
    "Poor": "Connection is slow. Web browsing may be sluggish, streaming difficult.",
    "Fair": "Connection is okay for web browsing and some standard definition streaming.",
    "Good": "Connection is good for most activities, including HD streaming.",
    "Excellent": "Connection is very fast.",
}
PERMISSIONS = ("sms", "storage", "phone", "network")
MODE_BY_PREFERENCE = {"4g_only": "4G", "3g_only": "3G", "2g_only": "2G"}


def default_vpn() -> VpnDetails:
    """The VPN server a connection uses: a fresh record each time (tau2 shares one, see the module docstring)."""
    return VpnDetails(server_address="192.168.1.1", protocol="OpenVPN", server_performance="excellent")


class PhoneTools(Toolkit):
    """The customer's phone: what they can check and change on it themselves."""

    factory_apn: APNSettings = APNSettings()
    """What a reboot restores after `reset_apn_settings` (tau2: its model defaults)."""

    # ------------------------------------------------------------------ status

    @tool(ToolKind.READ)
    def check_status_bar(self) -> str:
        """Look at the status bar at the top of the screen: signal, network type, data, Wi-Fi, VPN and battery."""
        return f"Status Bar: {self.status_bar()}"

    @tool(ToolKind.READ)
    def check_network_status(self) -> str:
        """Open the network status screen: airplane mode, SIM, cellular connection and signal, data, roaming, Wi-Fi."""
        d = self.device
        lines = [
            f"Airplane Mode: {_on(d.airplane_mode)}",
            f"SIM Card Status: {self.sim_status()}",
            f"Cellular Connection: {d.network_connection_status}",
            f"Cellular Signal: {d.network_signal_strength}",
            f"Cellular Network Type: {d.network_technology_connected}",
            f"Mobile Data Enabled: {_yes(d.data_enabled)}",
            f"Data Roaming Enabled: {_yes(d.roaming_enabled)}",
            f"Wi-Fi Radio: {_on(d.wifi_enabled)}",
            f"Wi-Fi Connected: {_yes(d.wifi_connected)}",
        ]
        if d.wifi_connected:
            lines.append(f"Connected Wi-Fi Network: {d.wifi_ssid}")
        return "\n".join(lines)

    @tool(ToolKind.READ)
    def check_network_mode_preference(self) -> str:
        """See which mobile network types the phone prefers."""
        return f"Network Mode Preference: {self.device.network_mode_preference}"

    @tool(ToolKind.WRITE)
    def set_network_mode_preference(self, mode: str) -> str:
        """Choose which mobile network types the phone uses; the phone then searches for a network again.

        Args:
            mode: One of "4g_5g_preferred", "4g_only", "3g_only", "2g_only".
        """
        if mode not in NETWORK_MODES:
            return (
                f"Failed to set network mode: '{mode}' is not a valid option. Please use one of: "
                f"{', '.join(NETWORK_MODES)}\nStatus Bar: {self.status_bar()}"
            )
        self._device().network_mode_preference = mode  # type: ignore[assignment]  # checked above
        self.simulate_network_search()
        return self._with_status(f"Preferred Network Mode set to: {mode}")

    @tool(ToolKind.READ)
    def run_speed_test(self) -> str:
        """Measure the phone's mobile data speed."""
        speed, description = self.speed_test()
        if speed is None:
            return f"Speed test failed: {description or 'Could not determine speed'}."
        return f"Speed Test Result: {speed:.2f} Mbps ({description}). {SPEED_ADVICE.get(description, '')}"

    # ------------------------------------------------------------------ airplane mode and SIM

    @tool(ToolKind.WRITE)
    def toggle_airplane_mode(self) -> str:
        """Switch airplane mode on or off."""
        return self._with_status(f"Airplane Mode is now {_on(self._toggle_airplane_mode())}.")

    @tool(ToolKind.READ)
    def check_sim_status(self) -> str:
        """See whether the SIM card is present, working or locked."""
        return SIM_TEXT.get(self.sim_status(), f"Unknown SIM status: {self.sim_status()}")

    @tool(ToolKind.WRITE)
    def reseat_sim_card(self) -> str:
        """Take the SIM card out and put it back in."""
        self._device().sim_card_missing = False
        self.simulate_network_search()
        return self._with_status("SIM card re-seated successfully.")

    # ------------------------------------------------------------------ mobile data and roaming

    @tool(ToolKind.WRITE)
    def toggle_data(self) -> str:
        """Switch mobile data on or off."""
        return self._with_status(f"Mobile Data is now {_on(self._toggle_data())}.")

    @tool(ToolKind.WRITE)
    def toggle_roaming(self) -> str:
        """Switch data roaming on or off on the phone."""
        return self._with_status(f"Data Roaming is now {_on(self._toggle_roaming())}.")

    @tool(ToolKind.READ)
    def check_data_restriction_status(self) -> str:
        """See whether data saver mode is on."""
        if self.device.data_saver_mode:
            return "Data Saver mode is ON (limits data usage)."
        return "Data Saver mode is OFF."

    @tool(ToolKind.WRITE)
    def toggle_data_saver_mode(self) -> str:
        """Switch data saver mode on or off."""
        return self._with_status(f"Data Saver Mode is now {_on(self._toggle_data_saver())}.")

    # ------------------------------------------------------------------ APN

    @tool(ToolKind.READ)
    def check_apn_settings(self) -> str:
        """See the access point name and the picture-message server the phone uses."""
        apn = self.device.active_apn_settings
        return (
            f"Current APN Name: {apn.apn_name or 'Not Set'}\nMMSC URL (for picture messages): {apn.mmsc_url or 'Not Set'}"
            "\n(These are technical settings, usually best left unchanged.)"
        )

    @tool(ToolKind.WRITE)
    def set_apn_settings(self, apn_settings: dict[str, Any]) -> str:
        """Replace the access point settings; the phone then searches for a network again.

        Args:
            apn_settings: The new settings: apn_name ("internet" or "broken"), reset_at_reboot, mms_apn, mmsc_url, mms_proxy, mms_port.
        """
        from bench_kernel import structure

        settings = structure(apn_settings, APNSettings, source="set_apn_settings", root="$.apn_settings")
        self._device().active_apn_settings = settings
        self.simulate_network_search()
        return self._with_status(f"APN settings set to: {settings.apn_name}")

    @tool(ToolKind.WRITE)
    def reset_apn_settings(self) -> str:
        """Ask the phone to restore its default access point settings; they are restored at the next reboot."""
        self._device().active_apn_settings.reset_at_reboot = True
        self.simulate_network_search()
        return self._with_status("APN settings will reset at reboot.")

    # ------------------------------------------------------------------ Wi-Fi and Wi-Fi calling

    @tool(ToolKind.READ)
    def check_wifi_status(self) -> str:
        """See whether Wi-Fi is on and which network it is connected to."""
        d = self.device
        if not d.wifi_enabled:
            return "Wi-Fi is turned OFF."
        if d.wifi_connected:
            return f"Wi-Fi is ON and connected to '{d.wifi_ssid}'. Signal strength: {d.wifi_signal_strength}."
        return "Wi-Fi is ON but not connected to any network."

    @tool(ToolKind.WRITE)
    def toggle_wifi(self) -> str:
        """Switch Wi-Fi on or off (not possible in airplane mode)."""
        if self.device.airplane_mode:
            return f"Cannot change Wi-Fi settings while Airplane Mode is ON.\nStatus Bar: {self.status_bar()}"
        d = self._device()
        d.wifi_enabled = not d.wifi_enabled
        if not d.wifi_enabled:
            self._drop_wifi(d)
        return self._with_status(f"Wi-Fi is now {_on(d.wifi_enabled)}.")

    @tool(ToolKind.READ)
    def check_wifi_calling_status(self) -> str:
        """See whether Wi-Fi calling is on."""
        return f"Wi-Fi Calling is currently turned {_on(self.device.wifi_calling_enabled)}."

    @tool(ToolKind.WRITE)
    def toggle_wifi_calling(self) -> str:
        """Switch Wi-Fi calling on or off."""
        d = self._device()
        d.wifi_calling_enabled = not d.wifi_calling_enabled
        return self._with_status(f"Wi-Fi Calling is now {_on(d.wifi_calling_enabled)}.")

    # ------------------------------------------------------------------ VPN

    @tool(ToolKind.READ)
    def check_vpn_status(self) -> str:
        """See whether a VPN is on and connected."""
        d = self.device
        if d.vpn_connected:
            if d.vpn_details is not None:
                return f"VPN is ON and connected. Details: {_python_repr(d.vpn_details)}"
            return "VPN is ON and connected (no specific details available)."
        if d.vpn_enabled_setting:
            return "VPN is turned ON in settings, but currently not connected."
        return "VPN is turned OFF."

    @tool(ToolKind.WRITE)
    def connect_vpn(self) -> str:
        """Connect the phone's VPN."""
        if self.device.vpn_connected:
            return "VPN already connected."
        d = self._device()
        d.vpn_connected, d.vpn_details = True, default_vpn()
        return self._with_status("VPN connected successfully.")

    @tool(ToolKind.WRITE)
    def disconnect_vpn(self) -> str:
        """Disconnect the phone's VPN."""
        done = self._disconnect_vpn()
        return self._with_status("VPN disconnected successfully." if done else "No active VPN connection to disconnect.")

    # ------------------------------------------------------------------ apps

    @tool(ToolKind.READ)
    def check_installed_apps(self) -> str:
        """List the apps installed on the phone."""
        return f"The following apps are installed on the phone: {', '.join(self.device.app_statuses)}"

    @tool(ToolKind.READ)
    def check_app_status(self, app_name: str) -> str:
        """See an app's status and the permissions it has.

        Args:
            app_name: The app, for example "messaging".
        """
        app = self.device.app_statuses.get(app_name)
        if app is None:
            return f"App '{app_name}' not found on this phone."
        granted = _granted(app.permissions)
        if not granted:
            return f"Status for App: {app_name}\n - Permissions: None granted."
        return "\n".join([f"Status for App: {app_name}", " - Permissions Granted:", *(f"   - {p}" for p in granted)])

    @tool(ToolKind.READ)
    def check_app_permissions(self, app_name: str) -> str:
        """See which permissions an app has.

        Args:
            app_name: The app, for example "messaging".
        """
        app = self.device.app_statuses.get(app_name)
        if app is None:
            return f"App '{app_name}' not found on this phone."
        granted = _granted(app.permissions)
        if not granted:
            return f"App '{app_name}' currently has no permissions granted."
        return f"App '{app_name}' has permission for: {', '.join(granted)}."

    @tool(ToolKind.WRITE)
    def grant_app_permission(self, app_name: str, permission: str) -> str:
        """Give an app a permission.

        Args:
            app_name: The app, for example "messaging".
            permission: The permission, in lower case: "sms", "storage", "phone" or "network".
        """
        permission = permission.lower()
        if app_name not in self.device.app_statuses:
            message = f"Error. App '{app_name}' not found. Cannot grant permission."
        elif permission not in PERMISSIONS:
            message = f"Error. Permission '{permission}' not tracked for app '{app_name}', available permissions: {list(PERMISSIONS)}"
        else:
            setattr(self._device().app_statuses[app_name].permissions, permission, True)
            message = f"Success. Permission '{permission}' granted to app '{app_name}'."
        return self._with_status(message)

    @tool(ToolKind.READ)
    def can_send_mms(self) -> str:
        """Try whether the messaging app can send a picture message."""
        if self.mms_works():
            return "Your messaging app can send MMS messages."
        return "Your messaging app cannot send MMS messages."

    # ------------------------------------------------------------------ reboot and payments

    @tool(ToolKind.WRITE)
    def reboot_device(self) -> str:
        """Restart the phone (restores default access point settings if a reset was asked for)."""
        d = self._device()
        lines = []
        if d.active_apn_settings.reset_at_reboot:
            lines.append("Resetting APN settings...")
            d.active_apn_settings = copy.deepcopy(self.factory_apn)
        lines.append("Restarting network services...")
        d.network_connection_status = "searching"
        self.simulate_network_search()
        return self._with_status("\n".join(lines))

    @tool(ToolKind.READ)
    def check_payment_request(self) -> str:
        """See whether the carrier has sent a request to pay a bill."""
        request = self.surroundings.payment_request
        if request is None:
            return "No payment request has been made."
        return f"You have a payment request for bill {request.bill_id} of {request.amount_due} USD."

    @tool(ToolKind.WRITE)
    def make_payment(self) -> str:
        """Pay the bill the carrier asked you to pay."""
        if self.surroundings.payment_request is None:
            return "You do not have a payment request."
        request = self._surroundings().payment_request
        assert request is not None
        request.paid = True
        return f"Payment of {request.amount_due} USD has been made for bill {request.bill_id}."

    # ------------------------------------------------------------------ set-up for task files (not tools)

    def set_user_info(self, name: str, phone_number: str) -> None:
        """Say whose phone this is."""
        s = self._surroundings()
        s.name, s.phone_number = name, phone_number

    def set_user_location(self, abroad: bool) -> None:
        """Put the phone abroad or at home."""
        self._surroundings().is_abroad = abroad

    def turn_airplane_mode_on(self) -> str:
        """Force airplane mode on (by toggling, with its side effects)."""
        self._force(self._toggle_airplane_mode, True)
        return "Airplane Mode is now ON."

    def turn_airplane_mode_off(self) -> str:
        """Force airplane mode off (by toggling)."""
        self._force(self._toggle_airplane_mode, False)
        return "Airplane Mode is now OFF."

    def turn_roaming_on(self) -> str:
        """Force data roaming on (by toggling)."""
        self._force(self._toggle_roaming, True)
        return "Data Roaming is now ON."

    def turn_roaming_off(self) -> str:
        """Force data roaming off (by toggling)."""
        self._force(self._toggle_roaming, False)
        return "Data Roaming is now OFF."

    def turn_data_saver_mode_on(self) -> str:
        """Force data saver on (by toggling)."""
        self._force(self._toggle_data_saver, True)
        return "Data Saver Mode is now ON."

    def turn_data_saver_mode_off(self) -> str:
        """Force data saver off (by toggling)."""
        self._force(self._toggle_data_saver, False)
        return "Data Saver Mode is now OFF."

    def turn_data_off(self) -> str:
        """Force mobile data off (by toggling)."""
        self._force(self._toggle_data, False)
        return "Data connection broken."

    def turn_data_on(self) -> str:
        """Switch mobile data on without a network search."""
        self._device().data_enabled = True
        return "Data connection restored."

    def unseat_sim_card(self) -> str:
        """Take the SIM card out."""
        self._device().sim_card_missing = True
        self.simulate_network_search()
        return "SIM card un-seated successfully."

    def lock_sim_card(self, mode: str) -> str:
        """Lock the SIM card with its PIN ("pin") or PUK ("puk")."""
        if mode in ("pin", "puk"):
            self._device().sim_card_status = "locked_pin" if mode == "pin" else "locked_puk"
        self.simulate_network_search()
        return f"SIM card locked successfully in {mode} mode."

    def break_apn_settings(self) -> str:
        """Corrupt the access point name (no service until reset and reboot)."""
        self._device().active_apn_settings.apn_name = "broken"
        self.simulate_network_search()
        return "APN settings broken."

    def break_apn_mms_setting(self) -> str:
        """Remove the picture-message server from the access point settings."""
        self._device().active_apn_settings.mmsc_url = None
        return "APN MMS setting broken."

    def set_wifi_calling(self, enabled: bool, mms_over_wifi: bool | None = None) -> str:
        """Set Wi-Fi calling, and optionally whether picture messages go over Wi-Fi."""
        d = self._device()
        if d.wifi_calling_enabled != enabled:
            d.wifi_calling_enabled = not d.wifi_calling_enabled
        if mms_over_wifi is not None:
            d.wifi_calling_mms_over_wifi = mms_over_wifi
        return f"Wi-Fi Calling is now {_on(enabled)}."

    def break_vpn(self) -> str:
        """Connect the VPN to a slow server."""
        self.connect_vpn()
        details = self._device().vpn_details
        assert details is not None
        details.server_performance = "poor"
        return "VPN connection broken."

    def remove_app_permission(self, app_name: str, permission: str) -> str:
        """Take a permission away from an app."""
        permission = permission.lower()
        if app_name not in self.device.app_statuses or permission not in PERMISSIONS:
            return f"Permission '{permission}' of app '{app_name}' is not tracked."
        setattr(self._device().app_statuses[app_name].permissions, permission, False)
        return f"Permission '{permission}' removed from app '{app_name}'."

    # ------------------------------------------------------------------ assertions for task files (not tools)

    def assert_airplane_mode_status(self, expected_status: bool) -> bool:
        """True when airplane mode is as expected."""
        return self.device.airplane_mode == expected_status

    def assert_service_status(self, expected_status: str) -> bool:
        """True when the cellular connection status is as expected ("connected", "no_service", ...)."""
        return self.device.network_connection_status == expected_status

    def assert_mobile_data_status(self, expected_status: bool) -> bool:
        """True when mobile data works (or not) as expected."""
        return self.mobile_data_works() == expected_status

    def assert_mobile_roaming_status(self, expected_status: bool) -> bool:
        """True when the phone's data roaming setting is as expected."""
        return self.device.roaming_enabled == expected_status

    def assert_mobile_data_saver_mode_status(self, expected_status: bool) -> bool:
        """True when data saver mode is as expected."""
        return self.device.data_saver_mode == expected_status

    def assert_internet_speed(self, expected_speed: float, expected_desc: str | None = None) -> bool:
        """True when the speed test reaches expected_speed (and has this description, when given)."""
        speed, description = self.speed_test()
        if expected_desc is None:
            return (speed or 0.0) >= expected_speed
        return (speed or 0.0) >= expected_speed and description.lower() == expected_desc.lower()

    def assert_internet_not_excellent(self) -> bool:
        """True when the speed test does not say Excellent."""
        return self.speed_test()[1].lower() != "excellent"

    def assert_can_send_mms(self, expected_status: bool) -> bool:
        """True when sending a picture message works (or not) as expected."""
        return self.mms_works() == expected_status

    def assert_mobile_data_usage_exceeded(self, expected_status: bool) -> bool:
        """True when the line's data allowance is used up (or not) as expected."""
        return self.surroundings.mobile_data_usage_exceeded == expected_status

    # ------------------------------------------------------------------ the simulation

    @property
    def device(self) -> PhoneDevice:
        """The device, read-only (use `_device()` to change it)."""
        return self.state[PHONE_TABLE]["device"]

    @property
    def surroundings(self) -> Surroundings:
        """The surroundings, read-only (use `_surroundings()` to change them)."""
        return self.state[PHONE_TABLE]["surroundings"]

    def sim_status(self) -> str:
        """The SIM as the phone sees it: missing wins over its own status."""
        return "missing" if self.device.sim_card_missing else self.device.sim_card_status

    def simulate_network_search(self) -> None:
        """Find a network as the settings, the SIM, the line and the surroundings allow."""
        d, signals = self._device(), cast(dict[str, Any], self.surroundings.signal_strength)
        status: Any = "no_service"
        technology: Any = "none"
        signal: Any = "none"
        if self.sim_status() == "active":
            status = "connected"
            technology = MODE_BY_PREFERENCE.get(d.network_mode_preference, "4G")
            if d.network_mode_preference == "4g_5g_preferred":
                technology = "4G" if signals.get("5G", "none") == "none" else "5G"
            signal = signals.get(technology, "none")
        if d.airplane_mode or d.active_apn_settings.apn_name == "broken" or not self.surroundings.line_active:
            status, technology, signal = "no_service", "none", "none"
        d.network_connection_status, d.network_technology_connected, d.network_signal_strength = status, technology, signal

    def mobile_data_works(self) -> bool:
        """Whether mobile data gets through: radio, service, roaming abroad, the data switch and the allowance."""
        d, s = self.device, self.surroundings
        if d.airplane_mode or d.network_signal_strength == "none" or d.network_connection_status == "no_service":
            return False
        if s.is_abroad and not (d.roaming_enabled and s.roaming_allowed):
            return False
        return d.data_enabled and not s.mobile_data_usage_exceeded

    def speed_test(self) -> tuple[float | None, str]:
        """The speed in Mbps and its description; (None, "No Connection") without mobile data."""
        if not self.mobile_data_works():
            return None, "No Connection"
        d = self.device
        factor = 0.1 if d.vpn_connected and d.vpn_details is not None and d.vpn_details.server_performance == "poor" else 1.0
        if d.data_saver_mode:
            factor *= 0.2
        low, high = SPEED_RANGES.get(d.network_technology_connected, (0.0, 0.0))
        speed = round((low + high) / 2.0 * SIGNAL_FACTORS.get(d.network_signal_strength, 0.0) * factor, 2)
        return speed, _speed_description(speed)

    def mms_works(self) -> bool:
        """Whether a picture message would go out."""
        d = self.device
        if not self.mobile_data_works() or d.network_technology_connected == "2G":
            return False
        if d.wifi_calling_enabled and d.wifi_calling_mms_over_wifi:
            return False
        messaging = d.app_statuses.get("messaging")
        return d.active_apn_settings.mmsc_url is not None and messaging is not None and messaging.permissions.sms and messaging.permissions.storage

    def status_bar(self) -> str:
        """The status bar's indicators."""
        d = self.device
        if d.airplane_mode:
            icons = ["✈️ Airplane Mode"]
        else:
            icons = [SIGNAL_ICONS.get(d.network_signal_strength, "📵 No Signal")]
            if d.network_technology_connected != "none":
                icons.append(d.network_technology_connected)
            if d.data_enabled and d.network_technology_connected != "none":
                icons += ["📱 Data Enabled", *(["🔽 Data Saver"] if d.data_saver_mode else [])]
            else:
                icons.append("📵 Data Disabled")
        if d.wifi_enabled and d.wifi_connected:
            icons.append(f"📡 Connected to {d.wifi_ssid}" if d.wifi_ssid else "📡 Enabled")
        if d.vpn_connected:
            icons.append("🔒 VPN Connected")
        icons.append(f"🔋 {d.battery_level}%")
        return " | ".join(icons)

    def set_payment_request(self, request: PaymentRequest | None) -> None:
        """Record (or clear) the carrier's payment request (the sync calls this)."""
        self._surroundings().payment_request = request

    def set_line_facts(self, *, line_active: bool, roaming_allowed: bool, usage_exceeded: bool) -> None:
        """Record what the carrier's side says about the line (the sync calls this), copying only on change."""
        s = self.surroundings
        if (s.line_active, s.roaming_allowed, s.mobile_data_usage_exceeded) != (line_active, roaming_allowed, usage_exceeded):
            s = self._surroundings()
            s.line_active, s.roaming_allowed, s.mobile_data_usage_exceeded = line_active, roaming_allowed, usage_exceeded

    # ------------------------------------------------------------------ helpers

    def _device(self) -> PhoneDevice:
        return self.state[PHONE_TABLE].edit("device")

    def _surroundings(self) -> Surroundings:
        return self.state[PHONE_TABLE].edit("surroundings")

    def _with_status(self, message: str) -> str:
        return f"{message}\nStatus Bar: {self.status_bar()}"

    @staticmethod
    def _force(toggle: Callable[[], bool], wanted: bool) -> None:
        """Toggle, and toggle back if that gave the wrong state (tau2's forcing helpers, side effects included)."""
        if toggle() != wanted:
            toggle()

    def _toggle_airplane_mode(self) -> bool:
        d = self._device()
        turning_on = not d.airplane_mode
        d.airplane_mode = turning_on
        if turning_on:
            self._drop_wifi(d)
            self._disconnect_vpn()
        else:
            d.network_connection_status = "searching"
            if d.wifi_enabled:
                self._drop_wifi(d)
        self.simulate_network_search()
        return d.airplane_mode

    def _toggle_data(self) -> bool:
        d = self._device()
        d.data_enabled = not d.data_enabled
        self.simulate_network_search()
        return d.data_enabled

    def _toggle_roaming(self) -> bool:
        d = self._device()
        d.roaming_enabled = not d.roaming_enabled
        self.simulate_network_search()
        return d.roaming_enabled

    def _toggle_data_saver(self) -> bool:
        d = self._device()
        d.data_saver_mode = not d.data_saver_mode
        return d.data_saver_mode

    def _disconnect_vpn(self) -> bool:
        if not self.device.vpn_connected:
            return False
        d = self._device()
        d.vpn_connected, d.vpn_details = False, None
        return True

    @staticmethod
    def _drop_wifi(d: PhoneDevice) -> None:
        d.wifi_connected, d.wifi_ssid, d.wifi_signal_strength = False, None, "none"


def _on(flag: bool) -> str:
    return "ON" if flag else "OFF"


def _yes(flag: bool) -> str:
    return "Yes" if flag else "No"


def _granted(permissions: Any) -> list[str]:
    return [name for name in PERMISSIONS if getattr(permissions, name)]


def _speed_description(speed: float) -> str:
    for limit, description in ((1, "Very Poor"), (5, "Poor"), (25, "Fair"), (100, "Good")):
        if speed < limit:
            return description
    return "Excellent"


def _python_repr(details: VpnDetails) -> str:
    """The details as tau2 prints them (a Python dict whose performance is an enum member)."""
    performance = f"<PerformanceLevel.{details.server_performance.upper()}: '{details.server_performance}'>"
    return f"{{'server_address': {details.server_address!r}, 'protocol': {details.protocol!r}, 'server_performance': {performance}}}"
