"""voice-cascade: an offline realtime agent (VAD, ASR, any bench text agent, TTS) served over the OpenAI Realtime protocol.

`agent.py` is the registered agent, `server.py` the in-process websockets server (with lockstep pacing), `session.py`
one connection's protocol and pipeline, `vad.py` the energy detector, `audio.py` mu-law and WAV, `wer.py` the
`realtime_asr_wer` metric, `plugin.py` its registration, `fakes.py` stand-in speech engines for tests.
"""
