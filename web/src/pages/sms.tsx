export default function Page() { return <p>sms</p>; }
